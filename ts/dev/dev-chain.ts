/**
 * The dev chain's test controls (docs/dev-chain.md): accounts the node signs for and impersonation, the
 * clock, automine and manual mining, direct state writes, snapshots and reset. Built by ts/node on `--dev` only, and the
 * JSON-RPC methods that use it (rpc/dev.ts) exist only then.
 */
import type { PoaEngine } from '../consensus/index.js';
import type { SignedTransaction } from '../ledger/index.js';
import type { Chain } from '../chain/index.js';
import type { Mempool, MempoolContents, TxAdmission } from '../mempool/index.js';
import type { StateChanges } from '../state/index.js';
import type { DevChainView, NodeContext } from '../services/index.js';
import { DevAccounts, DEV_ACCOUNT_COUNT } from './accounts.js';
import { DevClock } from './clock.js';
import { DevMiner, type MiningMode } from './miner.js';
import { type SendArgs, sendTransaction } from './send.js';
import { DevSnapshots } from './snapshots.js';
import { setBalance, setCode, setNonce, setStorageAt } from './state-writes.js';
import { warmUp } from './warm-up.js';
import { ServerError } from '../util/index.js';

/**
 * What the dev chain drives, as the concrete objects ts/node built: it rewinds and writes the chain, restores the
 * pool and hooks admission (transports get only the read interfaces of NodeContext).
 */
export interface DevChainContext {
  chain: Chain;
  mempool: Mempool;
  admission: TxAdmission;
}

/** Drop reasons kept for sends still waiting for their answer (a send reads its own at once). */
const MAX_DROP_REASONS = 1024;

export class DevChain implements DevChainView {
  readonly accounts: DevAccounts;
  readonly clock: DevClock;
  readonly miner: DevMiner;
  readonly snapshots = new DevSnapshots();
  /** The mining mode the node started with (anvil_reset goes back to it). */
  private readonly startMode: MiningMode;
  /** Why a block left out a transaction, by txid: its automine send answers that error (mined()). */
  private readonly dropReasons = new Map<string, string>();

  constructor(
    private readonly ctx: DevChainContext,
    poa: PoaEngine,
    mode: MiningMode,
    /** web3_clientVersion starts with `anvil/` (`--anvil-compat`). */
    readonly anvilCompat = false,
    /** Dev mnemonic accounts it signs for (`--dev-accounts`; the genesis funds the same). */
    accountCount = DEV_ACCOUNT_COUNT,
  ) {
    this.accounts = new DevAccounts(accountCount);
    this.startMode = { ...mode };
    this.clock = new DevClock(ctx.chain);
    this.miner = new DevMiner(ctx.chain, poa, ctx.mempool, this.clock, mode);
    ctx.chain.on('block', (_block, result) => {
      for (const d of result?.dropped ?? []) {
        this.dropReasons.set(d.tx.txid, d.reason);
        if (this.dropReasons.size > MAX_DROP_REASONS) this.dropReasons.delete(this.dropReasons.keys().next().value as string);
      }
    });
  }

  /**
   * evm_snapshot: record the head, the pending state writes, the clock, the mining mode and the pool, taken
   * between blocks (block production waits), so the four agree. Returns the id.
   */
  snapshot(): Promise<number> {
    const { chain, mempool } = this.ctx;
    return this.miner.exclusive(async () => {
      await chain.settled();
      return this.snapshots.take({
        height: chain.height,
        writes: chain.devWrites?.current() ?? new Map(),
        clock: { offset: this.clock.offsetSecs, next: this.clock.nextTimestamp },
        mode: { automine: this.miner.automine, intervalMs: this.miner.intervalMs },
        pool: mempool.contents(),
      });
    });
  }

  /**
   * evm_revert: back to the snapshot `id` (false when there is none: unknown, or used up by an earlier
   * revert). The chain rolls back to its height (Chain.rollbackTo: later blocks and every index of them
   * removed, the state put back), then its state writes, clock, pool and mining mode are restored; it and
   * every later snapshot are used up.
   */
  async revert(id: bigint): Promise<boolean> {
    const snap = await this.miner.exclusive(async () => {
      const s = this.snapshots.get(id);
      if (!s) return null;
      await this.rewind(s.height, s.writes, s.clock, s.pool);
      this.snapshots.consume(s.id);
      return s;
    });
    if (!snap) return false;
    await this.restoreMode(snap.mode);
    return true;
  }

  /**
   * anvil_reset / hardhat_reset: back to genesis as the node started: every block rolled back, the pool
   * emptied, state writes, snapshots and impersonations dropped, the clock and the mining mode as at start.
   */
  async reset(): Promise<void> {
    await this.miner.exclusive(async () => {
      await this.rewind(0, new Map(), null, { pending: [], queued: [] });
      this.snapshots.clear();
    });
    this.accounts.restoreImpersonated([]);
    await this.restoreMode(this.startMode);
  }

  /** Roll back to `height`, then put back writes, clock (null: as at start) and pool (block production is paused). */
  private async rewind(
    height: number,
    writes: StateChanges,
    clock: { offset: number; next: number | null } | null,
    pool: MempoolContents,
  ): Promise<void> {
    const { chain, admission } = this.ctx;
    await chain.rollbackTo(height);
    if (writes.size > 0) await chain.writeDevState(writes);
    if (clock) this.clock.restore(clock.offset, clock.next);
    else this.clock.reset();
    await admission.restorePool(pool);
  }

  private async restoreMode(mode: MiningMode): Promise<void> {
    await this.miner.restore(mode);
    // Transactions of a restored pool are mined at once when automine is on, as if just sent.
    if (mode.automine && this.ctx.mempool.size > 0) await this.miner.setAutomine(true);
  }

  /** Take over block production: automine on admission, the interval timer if one is set. */
  start(): void {
    const pooled = this.ctx.admission.onPooled;
    this.ctx.admission.onPooled = (tx) => {
      pooled?.(tx);
      this.miner.onPooled();
    };
    this.miner.start();
    // What the transaction journal replayed into the pool is mined at once under automine, as if just sent.
    if (this.ctx.mempool.size > 0) this.miner.onPooled();
  }

  stop(): Promise<void> {
    return this.miner.stop();
  }

  /**
   * Whether a transaction admitted now is in a committed block once settled() resolves (automine): a send that
   * waits for that skips the transaction journal (TxAdmission.submitRaw, `answeredOnceMined`).
   */
  get minesOnAdmission(): boolean {
    return this.miner.automine;
  }

  /** Resolves once automine has mined what was admitted so far (a send answers after its block, as Hardhat). */
  settled(): Promise<void> {
    return this.miner.settled();
  }

  /**
   * A send's answer under automine: resolves once the block of what was admitted so far is committed, and throws
   * the reason when that block left this transaction out (EIP-3607, a nonce or balance that changed): a client
   * is never given the hash of a transaction that is gone.
   */
  async mined(txid: string): Promise<void> {
    await this.miner.settled();
    const reason = this.dropReasons.get(txid);
    if (reason === undefined) return;
    this.dropReasons.delete(txid);
    throw new ServerError(`transaction ${`0x${txid}`} was not mined: ${reason}`);
  }

  /**
   * Run the first-request path once before the node reports ready (warm-up.ts); nothing of it stays. A failure
   * (a dev account emptied by an earlier session, say) only leaves the first requests slower, so it is ignored.
   */
  async warmUp(ctx: NodeContext): Promise<void> {
    try {
      await warmUp(ctx, this.ctx.chain, this.accounts);
    } catch {
      /* nothing to undo: the warm-up changes nothing */
    }
  }

  sendTransaction(ctx: NodeContext, args: SendArgs): Promise<SignedTransaction> {
    return sendTransaction(ctx, this.accounts, args);
  }

  setBalance(address: string, wei: bigint): Promise<void> {
    return setBalance(this.ctx.chain, address.toLowerCase(), wei);
  }

  setNonce(address: string, nonce: bigint): Promise<void> {
    return setNonce(this.ctx.chain, address.toLowerCase(), nonce);
  }

  setCode(address: string, code: Uint8Array): Promise<void> {
    return setCode(this.ctx.chain, address.toLowerCase(), code);
  }

  setStorageAt(address: string, slot: bigint, value: bigint): Promise<void> {
    return setStorageAt(this.ctx.chain, address.toLowerCase(), slot, value);
  }
}

/** The context's dev chain, or undefined on a chain that is not `--dev` (the dev JSON-RPC tables refuse then). */
export function devChainOf(ctx: Pick<NodeContext, 'dev'>): DevChain | undefined {
  return ctx.dev instanceof DevChain ? ctx.dev : undefined;
}
