/**
 * Address history (docs/storage.md): one posting per address and block listing the indexes of its transactions
 * there, and a count of transactions per address, written in each block's batch (a BlockStore contributor).
 */
import type { ReceiptRecord } from '../execution/index.js';
import type { SignedTransaction } from '../ledger/index.js';
import { type KvBatch, type KvOp, type KvStore, addrCountKey, addrTxKey, addrTxPrefix, prefixEnd } from '../storage/index.js';
import { u32be } from '../util/index.js';
import type { Block } from './block.js';
import type { BlockIndexContributor, DroppedIndex, RemovedBlock, TxLocation } from './block-index.js';

export class AddressIndex implements BlockIndexContributor {
  private readonly txCounts = new Map<string, number>();
  /** Addresses whose first transaction is in the block staged last (the daily aggregates count them). */
  private firstSeen = { height: -1, addresses: 0 };

  constructor(private readonly db: KvStore) {}

  stage(batch: KvBatch, block: Block, _receipts: readonly ReceiptRecord[]): () => void {
    const postings = new Map<string, number[]>();
    block.transactions.forEach((tx, i) => {
      for (const addr of txAddresses(tx)) addPosting(postings, addr, i);
    });
    const counts = new Map<string, number>();
    for (const [addr, indexes] of postings) {
      batch.put(addrTxKey(addr, block.index), postingValue(indexes));
      counts.set(addr, indexes.length);
    }
    this.loadTxCounts(counts.keys());
    let fresh = 0;
    for (const [addr, n] of counts) {
      const before = this.txCount(addr);
      if (before === 0) fresh++;
      counts.set(addr, n + before);
    }
    for (const [addr, n] of counts) batch.put(addrCountKey(addr), u32be(n));
    this.firstSeen = { height: block.index, addresses: fresh };
    return () => {
      for (const [addr, n] of counts) this.txCounts.set(addr, n);
    };
  }

  /** Addresses whose first transaction ever is in the block at height, which must be the one staged last. */
  firstTimeAddresses(height: number): number {
    if (this.firstSeen.height !== height) throw new Error(`block ${height}: address history not staged before it`);
    return this.firstSeen.addresses;
  }

  drop(removed: readonly RemovedBlock[]): DroppedIndex {
    const ops: KvOp[] = [];
    for (const { block } of removed) {
      const touched = new Set<string>();
      for (const tx of block.transactions) for (const addr of txAddresses(tx)) touched.add(addr);
      for (const addr of touched) ops.push({ type: 'del', key: addrTxKey(addr, block.index) });
    }
    for (const [addr, d] of txCountDeltas(removed)) {
      const n = this.txCount(addr) + d;
      ops.push(n > 0 ? { type: 'put', key: addrCountKey(addr), value: u32be(n) } : { type: 'del', key: addrCountKey(addr) });
    }
    return { ops, applied: () => this.txCounts.clear() };
  }

  /** Transactions of an address once the removed blocks are gone (a rollback's daily aggregates need it). */
  countAfterDrop(removed: readonly RemovedBlock[]): (address: string) => number {
    const deltas = txCountDeltas(removed);
    return (addr) => this.txCount(addr) + (deltas.get(addr) ?? 0);
  }

  /** Cache the counts of these addresses with one multi-get (a block's senders, instead of one read each). */
  private loadTxCounts(addresses: Iterable<string>): void {
    const missing = [...addresses].filter((a) => !this.txCounts.has(a));
    if (missing.length === 0) return;
    const raw = this.db.getManySync(missing.map(addrCountKey));
    missing.forEach((a, i) => this.txCounts.set(a, raw[i] ? (raw[i] as Buffer).readUInt32BE(0) : 0));
  }

  txCount(address: string): number {
    const cached = this.txCounts.get(address);
    if (cached !== undefined) return cached;
    const [raw] = this.db.getManySync([addrCountKey(address)]);
    const n = raw ? raw.readUInt32BE(0) : 0;
    this.txCounts.set(address, n);
    return n;
  }

  /**
   * Newest-first locations of the transactions touching address. Each posting holds at least one
   * location, so offset + limit postings are enough.
   */
  async history(address: string, offset: number, limit: number): Promise<TxLocation[]> {
    const prefix = addrTxPrefix(address);
    const rows = await this.db.range({ gte: prefix, lt: prefixEnd(prefix), reverse: true, limit: offset + limit });
    const out: TxLocation[] = [];
    for (const [k, v] of rows) {
      const locs = postingLocations(k, v);
      for (let j = locs.length - 1; j >= 0 && out.length < offset + limit; j--) out.push(locs[j]);
      if (out.length >= offset + limit) break;
    }
    return out.slice(offset);
  }

  /** Location of the first transaction that touched address (its first history entry), or null. */
  async first(address: string): Promise<TxLocation | null> {
    const prefix = addrTxPrefix(address);
    const [row] = await this.db.range({ gte: prefix, lt: prefixEnd(prefix), limit: 1 });
    return row ? (postingLocations(row[0], row[1])[0] ?? null) : null;
  }
}

/** Per address, minus the transactions the removed blocks listed for it. */
function txCountDeltas(removed: readonly RemovedBlock[]): Map<string, number> {
  const deltas = new Map<string, number>();
  for (const { block } of removed) {
    for (const tx of block.transactions) for (const addr of txAddresses(tx)) deltas.set(addr, (deltas.get(addr) ?? 0) - 1);
  }
  return deltas;
}

function addPosting(postings: Map<string, number[]>, addr: string, index: number): void {
  const list = postings.get(addr);
  if (list) list.push(index);
  else postings.set(addr, [index]);
}

/** A posting's value: the transaction indexes as u32 BE, ascending. */
function postingValue(indexes: readonly number[]): Buffer {
  const b = Buffer.allocUnsafe(indexes.length * 4);
  for (let j = 0; j < indexes.length; j++) b.writeUInt32BE(indexes[j], j * 4);
  return b;
}

/** Locations of a posting ('A' + addr20 + height u64 -> u32 BE indexes), ascending. */
export function postingLocations(k: Buffer, v: Buffer): TxLocation[] {
  const height = k.readUInt32BE(21) * 0x1_0000_0000 + k.readUInt32BE(25);
  const out: TxLocation[] = [];
  for (let o = 0; o + 4 <= v.length; o += 4) out.push({ height, index: v.readUInt32BE(o) });
  return out;
}

/**
 * Addresses whose history lists the transaction (sender and recipient, once each), lower case: one
 * posting per address and block, whatever case a submission spelled it in.
 */
export function txAddresses(tx: SignedTransaction): string[] {
  const from = tx.from_address.toLowerCase();
  const to = tx.to_address.toLowerCase();
  return from === to ? [from] : [from, to];
}
