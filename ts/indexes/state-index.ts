/**
 * Sorted indexes over the authenticated state, kept on disk (state-index-store.ts) and maintained at commit:
 * rich list, top accounts, token holder lists, the tokens an account holds, delegators and unbondings are
 * read from here, never by scanning the state per request, and none of them holds an entry per account in
 * the JS heap. A top-k read is one RocksDB range read of k rows.
 *
 * Each committed block's changed keys (the chain's `block` event; `rollback` names the keys it restored) are
 * folded in one write batch with the marker, which records the height the tables describe. At start the
 * tables are used as they are when the marker is at the head; a few blocks behind (a crash between the
 * chain's write and the index's), the keys those blocks changed are folded again; otherwise the tables are
 * rebuilt by streaming the indexed namespaces of the `S` table, and queries wait for that (at most
 * BUILD_WAIT_MS, then StateIndexBuildingError) while the node goes on committing blocks.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Chain, ChainEvents } from '../chain/index.js';
import type { ChainReader } from '../chain/interface.js';
import { indexedChain } from './indexed-chain.js';
import type { KeyStr } from '../state/index.js';
import { stateKey } from '../storage/index.js';
import { NodeError, ServerError } from '../util/index.js';
import { addressOf, contractOf, foldChanges, INDEXED_NAMESPACES, isIndexedKey, writeStats } from './state-index-fold.js';
import {
  amountOf,
  amountOfRank,
  clearTables,
  decodeMarker,
  decodeStats,
  emptyTotals,
  encodeMarker,
  type HolderStats,
  INDEX_FORMAT,
  IndexTables,
  type IndexTotals,
  MARKER_KEY,
  T,
} from './state-index-store.js';

/** How long a query waits for a rebuild before answering StateIndexBuildingError. */
export const BUILD_WAIT_MS = 10_000;
/**
 * State entries read and written per event loop turn while rebuilding. Small: each turn holds the loop (a
 * synchronous read, the fold, the write), and a node that joined by state sync rebuilds over its whole state
 * while it starts — with 10,000 a turn, loading gRPC and libp2p behind ~100 such turns took 12-16 s instead of
 * 1 s at 1,000,000 accounts on a loaded 2-core machine (bench/state-sync.ts, bench/RESULTS.md "State sync").
 */
const BUILD_CHUNK = 1_000;
/**
 * At most this many blocks' change sets, naming at most CATCH_UP_KEYS indexed keys, are folded at start
 * instead of a rebuild when the marker is behind the head (they are read in one tick).
 */
const CATCH_UP_BLOCKS = 1_000;
const CATCH_UP_KEYS = 1_000_000;

/** A query arrived while the index is being rebuilt from the state (at start, after an unclean stop). */
export class StateIndexBuildingError extends NodeError {
  readonly code = 'STATE_INDEX_BUILDING';
  constructor(read: number) {
    super(`the state index is being rebuilt (${read} state entries read so far); retry shortly`, 'UNAVAILABLE');
  }
}

/** 20 raw bytes of an `0x…` address or `SRC20_…` contract, or null when it is not one. */
function idBytes(id: string): Buffer | null {
  const hex = id.slice(id.indexOf(id.charCodeAt(0) === 0x30 ? 'x' : '_') + 1);
  return /^[0-9a-fA-F]{40}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/** One ordering read from disk: native balances, or one token's holders. */
export class RankedBalances {
  constructor(
    private readonly tables: IndexTables,
    /** Rows of the order: prefix + rank (width bytes) + address. */
    private readonly rankPrefix: Buffer,
    private readonly width: 16 | 32,
    /** The row holding an address's amount. */
    private readonly rowOf: (address: Buffer) => Buffer,
    private readonly stats: () => HolderStats,
  ) {}

  get(address: string): bigint {
    const id = idBytes(address);
    const v = id && this.tables.get(this.rowOf(id));
    return v ? amountOf(v) : 0n;
  }

  /** Number of non-zero balances. */
  get size(): number {
    return this.stats().holders;
  }

  /** Sum of the balances. */
  get total(): bigint {
    return this.stats().total;
  }

  /** Entries from rank offset (0-based), largest first. */
  top(limit: number, offset = 0): { address: string; balance: bigint }[] {
    if (limit <= 0) return [];
    const at = this.rankPrefix.length;
    return this.tables.rows(this.rankPrefix, offset, limit).map(([k]) => ({
      address: addressOf(k.subarray(at + this.width, at + this.width + 20)),
      balance: amountOfRank(k.subarray(at, at + this.width), this.width),
    }));
  }
}

interface Update {
  values: Map<KeyStr, Buffer | undefined>;
  /** The height the tables describe once folded (undefined: unchanged). */
  height?: number;
  /** Dev-chain writes not yet in a block. */
  dirty: boolean;
}

export interface StateIndexOptions {
  /** State entries read per event loop turn while rebuilding (default BUILD_CHUNK). */
  buildChunk?: number;
  /** Progress of a rebuild, and trouble (a failed write: queries then fail until a restart rebuilds). */
  log?: (level: 'info' | 'error', fields: Record<string, unknown>, msg: string) => void;
}

export class StateIndex {
  private readonly tables: IndexTables;
  private totals: IndexTotals = emptyTotals();
  private height: number;
  private dirty = false;
  private building = true;
  private stopped = false;
  private failure: unknown = null;
  private readonly queue: Update[] = [];
  private draining: Promise<void> | null = null;
  private readonly opened: Promise<void>;
  /** State entries read by the current rebuild. */
  private read = 0;
  private readonly onBlock: (...args: ChainEvents['block']) => void;
  private readonly onRollback: (...args: ChainEvents['rollback']) => void;

  /** How the tables were made current at start: used as they were, caught up from change sets, or rebuilt. */
  startedFrom: 'disk' | 'caught-up' | 'rebuilt' = 'disk';
  /** Account balances (wei) with a non-zero balance. */
  readonly accounts: RankedBalances;
  /** Deployed token contracts. */
  readonly tokens: { readonly size: number; [Symbol.iterator](): Iterator<string> };

  /** Call with the chain settled (its state is the head's): the tables describe that head. */
  constructor(
    private readonly chain: Chain,
    private readonly opts: StateIndexOptions = {},
  ) {
    this.tables = new IndexTables(chain.blocks.db);
    this.height = chain.height;
    const t = this.tables;
    this.accounts = new RankedBalances(
      t,
      t.key(T.accountRank),
      32,
      (a) => t.key(T.account, a),
      () => ({
        holders: this.totals.nonZero,
        total: this.totals.total,
      }),
    );
    const self = this;
    this.tokens = {
      get size() {
        return self.totals.tokens;
      },
      *[Symbol.iterator]() {
        for (const [k] of t.rows(t.key(T.token))) yield contractOf(k.subarray(2, 22));
      },
    };
    this.onBlock = (block, _result, undo) =>
      this.enqueue({ values: this.capture(undo.keys()), height: block.index, dirty: false });
    this.onRollback = (height, keys) => this.enqueue({ values: this.capture(keys), height, dirty: false });
    chain.on('block', this.onBlock);
    chain.on('rollback', this.onRollback);
    this.opened = this.open();
  }

  /** Token holders (token base units), largest first. */
  holdersOf(contract: string): RankedBalances | undefined {
    const c = idBytes(contract);
    if (!c) return undefined;
    const t = this.tables;
    const stats = () => decodeStats(t.get(t.key(T.holderStats, c)));
    if (stats().holders === 0) return undefined;
    return new RankedBalances(t, t.key(T.holderRank, c), 16, (h) => t.key(T.holding, c, h), stats);
  }

  /** Number of account records (including zero balances). */
  get accountRecords(): number {
    return this.totals.accountRecords;
  }

  /** Contracts in which address holds a non-zero balance, sorted. */
  tokensOf(address: string): string[] {
    const a = idBytes(address);
    if (!a) return [];
    return this.tables.rows(this.tables.key(T.accountTokens, a)).map(([k]) => contractOf(k.subarray(22, 42)));
  }

  /** Delegators of a validator (sorted). */
  delegatorsOf(validator: string): string[] {
    const v = idBytes(validator);
    if (!v) return [];
    return this.tables.rows(this.tables.key(T.delegation, v)).map(([k]) => addressOf(k.subarray(22, 42)));
  }

  /** Unbonding entries of a delegator: [validator, complete_epoch], soonest first (then by validator). */
  unbondingOf(delegator: string): [string, number][] {
    const d = idBytes(delegator);
    if (!d) return [];
    return this.tables
      .rows(this.tables.key(T.unbonding, d))
      .map(([k]): [string, number] => [addressOf(k.subarray(30, 50)), k.readUIntBE(24, 6)]);
  }

  /**
   * Resolves once the tables describe the head (built, and every committed block folded). While a rebuild
   * runs it waits up to `waitMs`, then throws StateIndexBuildingError.
   */
  async ready(waitMs = BUILD_WAIT_MS): Promise<void> {
    if (this.building) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.opened, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
      if (this.building && !this.failure) throw new StateIndexBuildingError(this.read);
    }
    while (this.draining) await this.draining;
    if (this.failure) throw new ServerError(`the state index is unavailable: ${String(this.failure)}`);
  }

  /** Stop following the chain (the node is closing): a rebuild in progress stops and resumes at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.chain.off('block', this.onBlock);
    this.chain.off('rollback', this.onRollback);
    await this.opened;
    while (this.draining) await this.draining;
  }

  /** The current values of the indexed keys among these (read in the tick of the event: the head's). */
  private capture(keys: Iterable<KeyStr>): Map<KeyStr, Buffer | undefined> {
    const out = new Map<KeyStr, Buffer | undefined>();
    const state = this.chain.state;
    for (const k of keys) if (isIndexedKey(k)) out.set(k, state.get(k));
    return out;
  }

  private async open(): Promise<void> {
    try {
      const resumed = this.resume();
      // Dev-chain writes pending at start are part of the live state, not of the head's committed state.
      const dev = this.chain.devWrites?.current();
      if (dev && dev.size > 0) this.queue.push({ values: this.capture(dev.keys()), dirty: true });
      if (!resumed) {
        this.startedFrom = 'rebuilt';
        await this.rebuild();
      }
    } catch (err) {
      this.fail(err);
    }
    this.building = false;
    if (!this.stopped) this.enqueue();
  }

  /**
   * Use the tables on disk when they describe the head, or a recent height whose later change sets the
   * history still has (their keys are queued to be folded again). False when a rebuild is needed.
   */
  private resume(): boolean {
    const m = decodeMarker(this.tables.get(MARKER_KEY));
    const head = this.chain.height;
    if (!m || m.format !== INDEX_FORMAT || !m.complete || m.dirty || m.height < 0 || m.height > head) return false;
    const history = this.chain.blocks.history;
    if (m.height < head && (head - m.height > CATCH_UP_BLOCKS || m.height < history.oldest)) return false;
    const keys = new Set<KeyStr>();
    try {
      for (let h = m.height + 1; h <= head; h++) {
        for (const k of history.changeSet(h).keys()) if (isIndexedKey(k)) keys.add(k);
        if (keys.size > CATCH_UP_KEYS) return false;
      }
    } catch {
      return false;
    }
    this.totals = m.totals;
    this.height = m.height;
    if (m.height < head) this.startedFrom = 'caught-up';
    if (m.height < head) this.queue.unshift({ values: this.capture(keys), height: head, dirty: false });
    return true;
  }

  /** Empty the tables and stream the indexed namespaces of the `S` table into them, a chunk per turn. */
  private async rebuild(): Promise<void> {
    const db = this.tables.db;
    const started = performance.now();
    this.opts.log?.('info', { height: this.height }, 'state index: rebuilding from the state');
    const totals = emptyTotals();
    // Marked incomplete before anything is removed: a crash from here on means a rebuild at the next start.
    await db.write([{ type: 'put', key: MARKER_KEY, value: this.marker(totals, false) }]);
    await clearTables(db);
    const stats = new Map<string, HolderStats>();
    const chunk = this.opts.buildChunk ?? BUILD_CHUNK;
    for (const [first, end] of INDEXED_NAMESPACES) {
      let gte = stateKey(Buffer.from([first]));
      const lt = stateKey(Buffer.from([end]));
      for (;;) {
        if (this.stopped) return;
        const rows = db.rangeSync({ gte, lt, limit: chunk });
        if (rows.length === 0) break;
        const values = new Map<KeyStr, Buffer>();
        for (const [k, v] of rows) values.set(k.toString('latin1', 1), v);
        const batch = db.batch();
        foldChanges(this.tables, totals, values, batch, stats);
        await batch.write();
        this.read += rows.length;
        if (rows.length < chunk) break;
        gte = Buffer.concat([rows[rows.length - 1][0], Buffer.from([0])]);
        await nextTurn();
      }
    }
    const batch = db.batch();
    writeStats(this.tables, batch, stats);
    batch.put(MARKER_KEY, this.marker(totals, true));
    await batch.write();
    this.totals = totals;
    const ms = Math.round(performance.now() - started);
    this.opts.log?.('info', { entries: this.read, accounts: totals.accountRecords, ms }, 'state index: rebuilt');
  }

  private marker(totals: IndexTotals, complete: boolean, height = this.height, dirty = this.dirty): Buffer {
    return encodeMarker({ format: INDEX_FORMAT, complete, dirty, height, totals });
  }

  private enqueue(update?: Update): void {
    if (update) this.queue.push(update);
    if (this.building || this.draining || this.failure || this.stopped || this.queue.length === 0) return;
    // Cleared a microtask later (the drain may finish in this tick): updates queued meanwhile start the next one.
    const run: Promise<void> = this.drain().finally(() => {
      if (this.draining === run) this.draining = null;
      this.enqueue();
    });
    this.draining = run;
  }

  /** Fold queued updates in order, each in one batch with the marker (the first one in the caller's tick). */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.failure) {
        const u = this.queue.shift() as Update;
        const totals = { ...this.totals };
        const batch = this.tables.db.batch();
        foldChanges(this.tables, totals, u.values, batch);
        const height = u.height ?? this.height;
        const dirty = u.dirty || (u.height === undefined && this.dirty);
        batch.put(MARKER_KEY, this.marker(totals, true, height, dirty));
        const written = batch.write();
        this.totals = totals;
        this.height = height;
        this.dirty = dirty;
        await written;
      }
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    this.failure ??= err;
    this.opts.log?.('error', { err }, 'state index: update failed; queries fail until a restart rebuilds it');
  }
}

const indexes = new WeakMap<Chain, StateIndex>();

/**
 * The chain's state index, created on first use once the head state has settled, without waiting for a
 * rebuild (the node opens it at start so it follows every commit from then on).
 */
export async function openStateIndex(chain: Chain, opts?: StateIndexOptions): Promise<StateIndex> {
  let idx = indexes.get(chain);
  if (!idx) {
    await chain.settled();
    idx = indexes.get(chain);
    if (!idx) indexes.set(chain, (idx = new StateIndex(chain, opts)));
  }
  return idx;
}

/** The chain's state index, ready to answer (see StateIndex.ready). */
export async function stateIndex(ctx: { chain: ChainReader }): Promise<StateIndex> {
  const idx = await openStateIndex(indexedChain(ctx.chain));
  await idx.ready();
  return idx;
}

/** Stop the chain's state index (before its database closes). */
export async function stopStateIndex(chain: Chain): Promise<void> {
  const idx = indexes.get(chain);
  indexes.delete(chain);
  await idx?.stop();
}
