import { crypto } from '../crypto/index.js';
import { type ReceiptRecord, decodeReceipts } from '../execution/index.js';
import { type KvBatch, type KvOp, type KvStore, addOps, logIndexKey, metaKey, receiptsKey } from '../storage/index.js';
import { type Block, EMPTY_BLOOM_HEX } from './block.js';
import type { BlockIndexContributor, DroppedIndex, RemovedBlock } from './block-index.js';

/**
 * The EVM log index (docs/evm.md): postings on disk, written in each block's atomic batch, plus the
 * blooms of the in-memory window in one contiguous buffer.
 *
 * Key 'I' + kind + term + height u64 -> '' for every distinct term of a block's logs:
 *   kind 0: no term (the block has at least one log); kind 1: emitting address (20 bytes);
 *   kind 2 + i: topic at position i (32 bytes), i = 0..3.
 * A filter's candidate heights are range scans of its terms' postings over [from, to]: union within an
 * OR-group (address list, one topic slot), intersection across groups.
 */
export const KIND_ANY_LOG = 0;
export const KIND_ADDRESS = 1;
export const kindTopic = (position: number): number => 2 + position;

/** A group above this many terms is not looked up (exact matching still applies it). */
export const MAX_INDEXED_GROUP_TERMS = 64;
/** Below this many (candidate x term) keys, a further group is checked by point reads instead of a range scan. */
const PROBE_MAX_KEYS = 512;
/** Heights per read when the index is rebuilt from the receipts table. */
const BACKFILL_STEP = 10_000;
const BLOOM = 256;
const NO_TERM = new Uint8Array(0);
const EMPTY = Buffer.alloc(0);
/** Present once every committed block's logs are in the index (written at open; see backfill). */
const MARKER = metaKey('log-index-v1');

/** What the index answers: the address OR-list and topic slots of an eth_getLogs filter. */
export interface LogTerms {
  /** Empty = any address. */
  addresses: readonly Uint8Array[];
  /** Up to 4 slots; null = any, else an OR-list of 32-byte topics. */
  topics: readonly (readonly Uint8Array[] | null)[];
}

interface Group {
  kind: number;
  items: readonly Uint8Array[];
}

/** Index entries of one block: each distinct (kind, term) of its logs once, plus the any-log marker. */
export function logIndexOps(height: number, receipts: readonly ReceiptRecord[]): KvOp[] {
  const ops: KvOp[] = [];
  const seen = new Set<string>();
  const add = (kind: number, term: Uint8Array): void => {
    const key = logIndexKey(kind, term, height);
    const id = key.toString('latin1');
    if (seen.has(id)) return;
    seen.add(id);
    ops.push({ type: 'put', key, value: EMPTY });
  };
  for (const r of receipts) {
    for (const log of r.logs) {
      add(KIND_ADDRESS, log.address);
      log.topics.forEach((t, i) => {
        if (i < 4) add(kindTopic(i), t);
      });
    }
  }
  if (ops.length > 0) add(KIND_ANY_LOG, NO_TERM);
  return ops;
}

/**
 * Blooms of the last `size` blocks in one Buffer, as a ring written twice (slot and slot + size): any
 * run of up to `size` consecutive heights is one contiguous n*256-byte region, so a scan is ONE native
 * bloomScan call. Per-slot flags mark non-zero blooms for filters without terms.
 */
export class BloomWindow {
  private readonly buf: Buffer;
  private readonly views: Uint8Array[];
  private readonly hasLogs: Uint8Array;
  private top = -1;

  constructor(readonly size: number) {
    this.buf = Buffer.alloc(2 * size * BLOOM);
    this.views = Array.from({ length: 2 * size }, (_, i) => this.buf.subarray(i * BLOOM, (i + 1) * BLOOM));
    this.hasLogs = new Uint8Array(size);
  }

  /** Oldest height held (greater than newest when nothing is held). */
  get oldest(): number {
    return Math.max(0, this.top - this.size + 1);
  }

  get newest(): number {
    return this.top;
  }

  /** Record the bloom (512 hex) of the next height. Heights arrive in ascending order. */
  put(height: number, bloomHex: string): void {
    const slot = height % this.size;
    const empty = bloomHex === EMPTY_BLOOM_HEX;
    for (const s of [slot, slot + this.size]) {
      if (empty) this.buf.fill(0, s * BLOOM, (s + 1) * BLOOM);
      else this.buf.write(bloomHex, s * BLOOM, BLOOM, 'hex');
    }
    this.hasLogs[slot] = empty ? 0 : 1;
    if (height > this.top) this.top = height;
  }

  /** Forget heights above `height` (a rollback); their slots are written again as blocks arrive. */
  truncate(height: number): void {
    this.top = Math.min(this.top, height);
  }

  /**
   * Heights in [from, to] (within oldest..newest) whose bloom may hold every group (each group: one item
   * of it); with no groups, the heights with any log.
   */
  scan(from: number, to: number, groups: readonly (readonly Uint8Array[])[]): number[] {
    const out: number[] = [];
    if (to < from) return out;
    const start = from % this.size;
    if (groups.length === 0) {
      for (let h = from; h <= to; h++) if (this.hasLogs[h % this.size]) out.push(h);
      return out;
    }
    for (const i of crypto().bloomScan(this.views.slice(start, start + to - from + 1), groups)) out.push(from + i);
    return out;
  }
}

/** Bloom groups of a filter: the address list, then each non-null topic slot. */
export function bloomGroups(terms: LogTerms): Uint8Array[][] {
  const groups: Uint8Array[][] = [];
  if (terms.addresses.length) groups.push([...terms.addresses]);
  for (const slot of terms.topics) if (slot?.length) groups.push([...slot]);
  return groups;
}

/**
 * Index groups in lookup order: addresses first, then topic slots from the last to the first (topic 0 is
 * usually an event signature shared by many contracts, later slots are more selective). Groups too large
 * to look up are left to exact matching.
 */
function indexGroups(terms: LogTerms): Group[] {
  const groups: Group[] = [];
  if (terms.addresses.length) groups.push({ kind: KIND_ADDRESS, items: terms.addresses });
  for (let i = Math.min(terms.topics.length, 4) - 1; i >= 0; i--) {
    const slot = terms.topics[i];
    if (slot?.length) groups.push({ kind: kindTopic(i), items: slot });
  }
  return groups.filter((g) => g.items.length <= MAX_INDEXED_GROUP_TERMS);
}

const heightOfKey = (k: Buffer): number => Number(k.readBigUInt64BE(k.length - 8));

/** Elements of sorted a that are in sorted b. */
function intersectSorted(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (const x of a) {
    while (j < b.length && b[j] < x) j++;
    if (j < b.length && b[j] === x) out.push(x);
  }
  return out;
}

/** The postings are a BlockStore contributor; the blooms follow the store's window of blocks. */
export class LogIndex implements BlockIndexContributor {
  readonly blooms: BloomWindow;

  constructor(
    private readonly db: KvStore,
    windowSize: number,
  ) {
    this.blooms = new BloomWindow(windowSize);
  }

  /**
   * Make sure the index covers every committed block: a store written before the index existed is
   * indexed once from its receipts table (idempotent puts; the marker is written last).
   */
  async open(headHeight: number): Promise<void> {
    if (await this.db.get(MARKER)) return;
    for (let from = 0; from <= headHeight; from += BACKFILL_STEP) {
      const to = Math.min(headHeight, from + BACKFILL_STEP - 1);
      const rows = await this.db.range({ gte: receiptsKey(from), lt: receiptsKey(to + 1) });
      const ops: KvOp[] = [];
      for (const [k, v] of rows) {
        // 0xc0 is the empty RLP list: a block without transactions.
        if (v.length > 1) ops.push(...logIndexOps(heightOfKey(k), decodeReceipts(v)));
      }
      if (ops.length) await this.db.write(ops);
    }
    await this.db.write([{ type: 'put', key: MARKER, value: Buffer.from([1]) }]);
  }

  stage(batch: KvBatch, block: Block, receipts: readonly ReceiptRecord[]): undefined {
    addOps(batch, logIndexOps(block.index, receipts));
    return undefined;
  }

  drop(removed: readonly RemovedBlock[]): DroppedIndex {
    const ops: KvOp[] = [];
    for (const { block, receipts } of removed)
      for (const op of logIndexOps(block.index, receipts)) ops.push({ type: 'del', key: op.key });
    return { ops };
  }

  /**
   * Heights in [from, to], ascending, that may hold logs matching terms (a superset: callers match each
   * log exactly). Heights in the bloom window come from one bloom scan, older ones from the postings.
   */
  async candidates(from: number, to: number, terms: LogTerms): Promise<number[]> {
    // The window part first, synchronously: the ring moves on while disk reads are awaited.
    const windowFrom = Math.max(from, this.blooms.oldest);
    const recent = this.blooms.scan(windowFrom, Math.min(to, this.blooms.newest), bloomGroups(terms));
    const diskTo = Math.min(to, windowFrom - 1);
    const older = diskTo >= from ? await this.postings(from, diskTo, terms) : [];
    return older.concat(recent);
  }

  /** Heights in [from, to] from the postings: union within each group, intersection across groups. */
  async postings(from: number, to: number, terms: LogTerms): Promise<number[]> {
    const groups = indexGroups(terms);
    if (groups.length === 0) return this.scanGroup({ kind: KIND_ANY_LOG, items: [NO_TERM] }, from, to);
    let cand: number[] | null = null;
    for (const g of groups) {
      if (cand === null) cand = await this.scanGroup(g, from, to);
      else if (cand.length * g.items.length <= PROBE_MAX_KEYS) cand = this.probeGroup(g, cand);
      else cand = intersectSorted(cand, await this.scanGroup(g, cand[0], cand[cand.length - 1]));
      if (cand.length === 0) break;
    }
    return cand ?? [];
  }

  /** Sorted heights in [from, to] holding any of the group's terms (one range scan per term). */
  private async scanGroup(g: Group, from: number, to: number): Promise<number[]> {
    const scans = await Promise.all(
      g.items.map((t) => this.db.range({ gte: logIndexKey(g.kind, t, from), lt: logIndexKey(g.kind, t, to + 1) })),
    );
    if (scans.length === 1) return scans[0].map(([k]) => heightOfKey(k));
    const set = new Set<number>();
    for (const rows of scans) for (const [k] of rows) set.add(heightOfKey(k));
    return [...set].sort((a, b) => a - b);
  }

  /** The candidates that hold any of the group's terms, by point reads (few candidates). */
  private probeGroup(g: Group, cand: readonly number[]): number[] {
    const keys: Buffer[] = [];
    for (const h of cand) for (const t of g.items) keys.push(logIndexKey(g.kind, t, h));
    const found = this.db.getManySync(keys);
    const n = g.items.length;
    return cand.filter((_, i) => {
      for (let j = 0; j < n; j++) if (found[i * n + j] !== undefined) return true;
      return false;
    });
  }
}
