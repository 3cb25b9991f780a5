/**
 * The dev chain's JSON-RPC warm-up (rpc/warm-up.ts), as the node runs it: only with automine and no interval
 * mining (the Hardhat-style dev loop it is for), in the background once the node serves, and on a scratch
 * chain of its own (same parameters, a temporary database) rather than the node's: V8 compiles the same code
 * whichever chain object runs it, so the served chain's first requests are as fast, while nothing a client
 * writes meanwhile can be undone by the warm-up's closing revert, and the start does not wait for it.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Chain } from '../chain/index.js';
import { PoaEngine } from '../consensus/index.js';
import type { KeyPair } from '../ledger/index.js';
import { TxAdmission, DEFAULT_MEMPOOL_LIMITS, Mempool } from '../mempool/index.js';
import { warmUpRpc, createRpcDispatcher } from '../rpc/index.js';
import type { NodeContext } from '../services/index.js';
import { DevChain, devChainOf } from '../dev/index.js';
import { openRocksStore } from '../storage/index.js';
import type { NodeConfig } from './config.js';

/** The scratch chain's directory inside the data dir (removed when the warm-up ends, and at the next start). */
const WARM_UP_DIR = 'dev-warm-up';

/** Whether the JSON-RPC warm-up runs: automine without interval mining. */
export function rpcWarmUpApplies(ctx: NodeContext): boolean {
  return ctx.dev?.miner.automine === true && ctx.dev.miner.intervalMs === 0;
}

/**
 * Run the warm-up on a scratch chain; resolves when it is done and the scratch chain is gone, to whether every
 * step answered (never rejects: a failure only leaves the first requests slower).
 */
export async function warmUpDevRpc(ctx: NodeContext, config: NodeConfig, key: KeyPair, log: Logger): Promise<boolean> {
  if (!rpcWarmUpApplies(ctx)) return false;
  const t0 = performance.now();
  // In the data dir, so a node killed during the warm-up leaves it where the next start removes it.
  const dir = join(config.dataDir, WARM_UP_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let complete = false;
  try {
    const db = await openRocksStore(join(dir, 'db'));
    try {
      const chain = new Chain(ctx.chain.params, db, config.windowSize);
      await chain.open();
      const mempool = new Mempool({ ...DEFAULT_MEMPOOL_LIMITS });
      const admission = new TxAdmission(chain, mempool);
      const consensus = new PoaEngine(chain, mempool, key, { blockTimeMs: 0, maxBlockTxs: config.maxBlockTxs });
      // The node's call and trace pools: the same workers and VMs the served chain's calls will use.
      const scratch: NodeContext = { ...ctx, chain, mempool, admission, consensus, filters: undefined, events: undefined };
      const accounts = devChainOf(ctx)?.accounts.addresses().length;
      const dev = new DevChain(
        { chain, mempool, admission },
        consensus,
        { automine: true, intervalMs: 0 },
        ctx.dev?.anvilCompat,
        accounts,
      );
      scratch.dev = dev;
      dev.start();
      try {
        complete = await warmUpRpc(scratch, createRpcDispatcher(scratch));
      } finally {
        await dev.stop();
        await chain.settled();
      }
    } finally {
      await db.close();
    }
  } catch (err) {
    log.debug({ err }, 'dev chain JSON-RPC warm-up failed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  log.debug({ ms: Math.round(performance.now() - t0), complete }, 'dev chain JSON-RPC warm-up');
  return complete;
}
