import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLOCK_GAS_LIMIT, CallPool, defaultCallWorkers } from '../ts/execution/index.js';
import { keyPairFromPrivate, randomKeyPair } from '../ts/ledger/keys.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { ethCall } from '../ts/services/index.js';
import { fromHex, to0x } from '../ts/util/hex.js';
import { type DevChain, EvmSender, callData, deployData, devParams, openChain, produce } from './evm-fixtures.js';
import { senderKeys } from './fixtures.js';
import type { Row } from './ledger.js';

const E18 = 10n ** 18n;
const ROUNDS = 5;
/** Init code that never returns (JUMPDEST PUSH1 0 JUMP): a creation that burns its whole gas limit. */
export const LOOP_INIT_CODE = fromHex('5b600056');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mgas = (gas: bigint, ms: number): number => Number(gas) / 1e6 / (ms / 1000);

/** One block's execute + state root (what the proposer spends before its commit), gas used and ms. */
async function timeBlock(
  dev: DevChain,
  txs: readonly SignedTransaction[],
  succeed: boolean,
): Promise<{ gas: bigint; ms: number }> {
  const t0 = performance.now();
  const p = await dev.chain.propose(txs, dev.validator, dev.chain.head.timestamp + 1);
  const ms = performance.now() - t0;
  await dev.chain.commit(p);
  if (p.result.deferred.length || p.result.dropped.length) throw new Error('bench block did not take every transaction');
  // A transaction that ran out of gas still fills the block: the rate would measure failures.
  if (succeed && p.result.receipts.some((r) => r.status !== 1)) throw new Error('a bench transaction failed');
  return { gas: p.block.gas_used, ms };
}

/** Median over ROUNDS warm rounds (one cold round first); `make` builds a fresh block's transactions. */
async function rounds(
  dev: DevChain,
  make: () => SignedTransaction[],
  succeed = true,
): Promise<{ gas: bigint; ms: number; all: number[] }> {
  await timeBlock(dev, make(), succeed);
  const runs: { gas: bigint; ms: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await timeBlock(dev, make(), succeed));
  const ms = median(runs.map((r) => r.ms));
  return { gas: runs[0].gas, ms, all: runs.map((r) => mgas(r.gas, r.ms)) };
}

function gasRow(name: string, r: { gas: bigint; ms: number; all: number[] }, note: string): Row {
  const rate = mgas(r.gas, r.ms);
  const full = (Number(BLOCK_GAS_LIMIT) / 1e6 / rate) * 1000;
  return {
    name,
    value: `${rate.toFixed(1)} Mgas/s`,
    note: `${(Number(r.gas) / 1e6).toFixed(1)}M gas in ${r.ms.toFixed(0)} ms (median of ${ROUNDS}; range ${Math.min(...r.all).toFixed(1)}-${Math.max(...r.all).toFixed(1)}); a full 30M-gas block: ${(full / 1000).toFixed(2)} s; ${note}`,
  };
}

/**
 * EVM gas throughput of block execution (execute + state root, the part of a block's production that
 * grows with its gas): an ERC-20 transfer mix filling a block, and a tight loop (one transaction burning
 * 29M gas). Then eth_call through the call-worker pool against in-process.
 */
export async function benchEvmGas(): Promise<Row[]> {
  const holders = senderKeys(850).map((k) => new EvmSender(k));
  const deployer = new EvmSender(keyPairFromPrivate('ed'.repeat(32)));
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-gas-'));
  const validator = randomKeyPair();
  const dev = await openChain(dir, devParams(validator, [...holders.map((h) => h.address), deployer.address]), validator, 1000);
  const pool = new CallPool({ workers: defaultCallWorkers(), maxQueue: 1000, gasCap: 50_000_000n, timeoutMs: 60_000 });
  try {
    const rows: Row[] = [];
    const deploy = await produce(dev, [deployer.tx(undefined, deployData('Token', ['Gas', 'GAS', 10n ** 30n]))]);
    const token = to0x(deploy.result.receipts[0].contractAddress as Uint8Array);
    for (let i = 0; i < holders.length; i += 400) {
      await produce(
        dev,
        holders.slice(i, i + 400).map((h) => deployer.tx(token, callData('Token', 'transfer', [h.address, 1000n * E18]))),
      );
    }
    const next = (i: number) => holders[(i + 1) % holders.length].address;
    // 850 transfers x 34,250 gas (limit 35,000): a block near the 30M limit (each sender once, to the next holder).
    const erc20 = await rounds(dev, () =>
      holders.map((h, i) => h.tx(token, callData('Token', 'transfer', [next(i), 1n]), { gas: 35_000n })),
    );
    rows.push(gasRow('EVM gas: ERC-20 transfer mix (850 transfers from 850 senders, one block)', erc20, 'execute + state root'));
    const looper = holders[0];
    // The loop never returns: it fails out of gas by design.
    const loop = await rounds(dev, () => [looper.tx(undefined, LOOP_INIT_CODE, { gas: 29_000_000n })], false);
    rows.push(gasRow('EVM gas: tight loop (one transaction burning 29M gas)', loop, 'JUMPDEST PUSH1 0 JUMP, 12 gas a round'));

    const data = callData('Token', 'balanceOf', [holders[1].address]);
    const calls = 400;
    for (let i = 0; i < 20; i++) await ethCall({ chain: dev.chain, evmCalls: pool } as never, { to: token, data });
    const time = async (ctx: object, parallel: number): Promise<number> => {
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          for (let i = 0; i < calls / parallel; i++) await ethCall(ctx as never, { to: token, data });
        }),
      );
      return calls / ((performance.now() - t0) / 1000);
    };
    const inProcess = await time({ chain: dev.chain }, 1);
    const seq = await time({ chain: dev.chain, evmCalls: pool }, 1);
    const par = await time({ chain: dev.chain, evmCalls: pool }, 8);
    rows.push({
      name: `eth_call balanceOf through the call-worker pool (${defaultCallWorkers()} worker(s))`,
      value: `${Math.round(seq).toLocaleString()} calls/s sequential, ${Math.round(par).toLocaleString()} calls/s 8 in flight`,
      note: `in-process on the main thread: ${Math.round(inProcess).toLocaleString()} calls/s; the pool adds a message round trip per state read not sent along`,
    });
    return rows;
  } finally {
    await pool.close();
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
