/**
 * The transaction journal (docs/storage.md, "Journaled mempool"): every transaction an API submission
 * admitted is durable before the submission answers, so a crash loses no accepted transaction. Appends are
 * group-committed: records arriving while a flush (write + fsync) runs go out together in the next one, so
 * one fsync covers every submission of its window. At start the journal is replayed through admission, in
 * arrival order; entries leave it once their transaction is in a block or no longer pending.
 *
 * Two sinks were measured (bench/journal.ts): an append-only file with fdatasync per group, and a RocksDB
 * batch written with sync per group. The file is the one the node uses (the numbers are in docs/storage.md).
 */
import { closeSync, constants, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writev } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { type SignedTransaction, decodeTransaction, encodeTransaction } from '../ledger/transaction.js';

/** A new segment starts past this size; an old one is deleted once none of its transactions is pending. */
const SEGMENT_BYTES = 16 * 1024 * 1024;
const HEADER = 8;

/** Where journal records go: `write` returns once the records are durable. */
export interface JournalSink {
  write(records: readonly Buffer[]): Promise<void>;
}

/**
 * Collects appends and writes them as one group (one durable write for all of them): the appends of one
 * turn of the event loop go together, and those arriving while a write runs go in the next one.
 */
export class GroupCommit {
  private queue: Buffer[] = [];
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private busy = false;
  /** Groups written, records in them and milliseconds spent writing (bench, metrics). */
  groups = 0;
  records = 0;
  writeMs = 0;
  maxWriteMs = 0;

  constructor(private readonly sink: JournalSink) {}

  append(record: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push(record);
      this.waiters.push({ resolve, reject });
      if (!this.busy) this.schedule();
    });
  }

  private schedule(): void {
    this.busy = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    const waiters = this.waiters;
    this.queue = [];
    this.waiters = [];
    const t0 = performance.now();
    try {
      await this.sink.write(batch);
      const ms = performance.now() - t0;
      this.writeMs += ms;
      if (ms > this.maxWriteMs) this.maxWriteMs = ms;
      this.groups++;
      this.records += batch.length;
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
    if (this.queue.length > 0) this.schedule();
    else this.busy = false;
  }

  /** Resolves once everything appended so far is written. */
  async drain(): Promise<void> {
    while (this.busy || this.queue.length > 0) await new Promise((r) => setImmediate(r));
  }
}

/** One journal record: u32 length, u32 CRC-32 of the payload, the payload (the typed transaction encoding). */
export function frame(payload: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(HEADER + payload.length);
  b.writeUInt32BE(payload.length, 0);
  b.writeUInt32BE(crc32(payload), 4);
  b.set(payload, HEADER);
  return b;
}

/** The whole records of a segment, in order; a torn or corrupt tail (a crash mid-write) ends the list. */
export function readFrames(buf: Buffer): { payloads: Buffer[]; validBytes: number } {
  const payloads: Buffer[] = [];
  let at = 0;
  while (at + HEADER <= buf.length) {
    const len = buf.readUInt32BE(at);
    if (len === 0 || at + HEADER + len > buf.length) break;
    const payload = buf.subarray(at + HEADER, at + HEADER + len);
    if (crc32(payload) !== buf.readUInt32BE(at + 4)) break;
    payloads.push(payload);
    at += HEADER + len;
  }
  return { payloads, validBytes: at };
}

interface Segment {
  seq: number;
  path: string;
  /** Transactions written to it that may still be pending. */
  live: Set<string>;
}

const segmentName = (seq: number): string => `seg-${String(seq).padStart(10, '0')}.log`;

/**
 * The append-only file journal: numbered segments in `dir`; appends go to the newest, group-committed with
 * fdatasync. Pruning deletes whole segments once none of their transactions is pending.
 */
export class TxJournal {
  private readonly segments: Segment[] = [];
  private current!: { seg: Segment; fd: number; bytes: number };
  private readonly commit: GroupCommit;
  /** Segment of each journaled transaction still live. */
  private readonly segmentOf = new Map<string, Segment>();
  /** Records pending for the group being written: txid per record, in order. */
  private pendingIds: string[] = [];

  private constructor(readonly dir: string) {
    this.commit = new GroupCommit({ write: (records) => this.writeGroup(records) });
  }

  /**
   * Open the journal in `dir`, returning it with the transactions it holds in arrival order (the caller
   * replays them through admission, then calls `settleReplay`).
   */
  static async open(dir: string): Promise<{ journal: TxJournal; replay: SignedTransaction[] }> {
    mkdirSync(dir, { recursive: true });
    const journal = new TxJournal(dir);
    const replay: SignedTransaction[] = [];
    const names = readdirSync(dir)
      .filter((n) => /^seg-\d{10}\.log$/.test(n))
      .sort();
    let last = 0;
    for (const name of names) {
      const seq = Number(name.slice(4, 14));
      last = Math.max(last, seq);
      const path = join(dir, name);
      const { payloads } = readFrames(readFileSync(path));
      const seg: Segment = { seq, path, live: new Set() };
      for (const p of payloads) {
        let tx: SignedTransaction;
        try {
          tx = decodeTransaction(p);
        } catch {
          continue; // an undecodable record (a format this node cannot read) is skipped, never fatal
        }
        if (journal.segmentOf.has(tx.txid)) continue;
        seg.live.add(tx.txid);
        journal.segmentOf.set(tx.txid, seg);
        replay.push(tx);
      }
      journal.segments.push(seg);
    }
    journal.startSegment(last + 1);
    return { journal, replay };
  }

  /** Transactions held (live entries), for tests and metrics. */
  get size(): number {
    return this.segmentOf.size;
  }

  get groups(): number {
    return this.commit.groups;
  }

  /** Groups written since open, records in them and time spent writing (logged at close, read by the bench). */
  get stats(): { groups: number; records: number; writeMs: number; maxWriteMs: number } {
    const { groups, records, writeMs, maxWriteMs } = this.commit;
    return { groups, records, writeMs: Math.round(writeMs), maxWriteMs: Math.round(maxWriteMs * 10) / 10 };
  }

  private startSegment(seq: number): void {
    const seg: Segment = { seq, path: join(this.dir, segmentName(seq)), live: new Set() };
    // O_DSYNC: each group is one writev that returns once the data is on disk.
    const fd = openSync(seg.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC);
    const old = this.current;
    this.current = { seg, fd, bytes: 0 };
    this.segments.push(seg);
    if (old) closeSync(old.fd);
  }

  /** Durable once resolved. */
  append(tx: SignedTransaction): Promise<void> {
    this.pendingIds.push(tx.txid);
    return this.commit.append(frame(encodeTransaction(tx)));
  }

  private async writeGroup(records: readonly Buffer[]): Promise<void> {
    const ids = this.pendingIds.splice(0, records.length);
    if (this.current.bytes >= SEGMENT_BYTES) this.startSegment(this.current.seg.seq + 1);
    const { fd, seg } = this.current;
    let bytes = 0;
    for (const r of records) bytes += r.length;
    // In the thread pool, never on the main thread: a slow disk (another process's fsyncs) would stall every
    // request. Appends arriving meanwhile form the next group, so groups grow as the disk slows.
    await new Promise<void>((resolve, reject) => writev(fd, records as Buffer[], (err) => (err ? reject(err) : resolve())));
    this.current.bytes += bytes;
    for (const id of ids) {
      if (this.segmentOf.has(id)) continue;
      seg.live.add(id);
      this.segmentOf.set(id, seg);
    }
  }

  /**
   * Forget transactions that are no longer pending (in a block, or dropped); then delete every older segment
   * none of whose transactions `isPending` still holds.
   */
  prune(done: Iterable<string>, isPending: (txid: string) => boolean): void {
    for (const id of done) {
      const seg = this.segmentOf.get(id);
      if (!seg) continue;
      seg.live.delete(id);
      this.segmentOf.delete(id);
    }
    for (let i = 0; i < this.segments.length; i++) {
      const seg = this.segments[i];
      if (seg === this.current.seg) continue;
      for (const id of seg.live) {
        if (isPending(id)) continue;
        seg.live.delete(id);
        this.segmentOf.delete(id);
      }
      if (seg.live.size > 0) continue;
      try {
        unlinkSync(seg.path);
      } catch {
        /* already gone */
      }
      this.segments.splice(i--, 1);
    }
  }

  /**
   * Make the journal hold exactly `txs` (the dev chain's evm_revert and anvil_reset replace the pool, and
   * the transactions of the blocks they removed must not come back at the next start): they are written
   * to a new segment, then every older segment is deleted. A crash in between replays both, and admission
   * refuses what the state no longer allows.
   */
  async reset(txs: readonly SignedTransaction[]): Promise<void> {
    await this.commit.drain();
    const old = this.segments.splice(0);
    this.segmentOf.clear();
    this.startSegment(this.current.seg.seq + 1);
    await Promise.all(txs.map((tx) => this.append(tx)));
    for (const seg of old) {
      try {
        unlinkSync(seg.path);
      } catch {
        /* already gone */
      }
    }
  }

  async close(): Promise<void> {
    await this.commit.drain();
    closeSync(this.current.fd);
  }
}
