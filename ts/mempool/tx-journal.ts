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
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { type SignedTransaction, decodeTransaction, encodeTransaction } from '../ledger/index.js';
import { GroupCommit } from './group-commit.js';
import { DEFAULT_SEGMENT_SIZES, SegmentFile, type SegmentSizes } from './journal-segment.js';

export { GroupCommit, type JournalSink } from './group-commit.js';

const HEADER = 8;

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

/**
 * A cancel record's payload: a zero byte (no transaction type is 0) and the transaction id. An older node reads
 * it as an undecodable record and skips it.
 */
const CANCEL = 0;

function cancelRecord(txid: string): Buffer {
  const id = Buffer.from(txid, 'utf8');
  const b = Buffer.allocUnsafe(1 + id.length);
  b[0] = CANCEL;
  id.copy(b, 1);
  return b;
}

function cancelledTxid(payload: Buffer): string | null {
  return payload[0] === CANCEL ? payload.subarray(1).toString('utf8') : null;
}

interface Segment {
  seq: number;
  path: string;
  /** Transactions written to it that may still be pending. */
  live: Set<string>;
  /** Groups being written to it (their transactions are not in `live` yet, so it is not pruned meanwhile). */
  writing: number;
}

/** Segment sizes and how many groups may be written at once (tests and the bench change them). */
export interface JournalOptions extends SegmentSizes {
  maxInFlight: number;
}

export const DEFAULT_JOURNAL_OPTIONS: JournalOptions = { ...DEFAULT_SEGMENT_SIZES, maxInFlight: 2 };

const segmentName = (seq: number): string => `seg-${String(seq).padStart(10, '0')}.log`;

/** Delete a segment file in the thread pool (never on the commit path); gone already is fine. */
function removeSegment(path: string): void {
  unlink(path).catch(() => undefined);
}

/**
 * The append-only file journal: numbered segments in `dir`, each zero-filled ahead of the writes
 * (mempool/journal-segment.ts); groups go to the newest with O_DSYNC. Pruning deletes whole segments once none
 * of their transactions is pending.
 */
export class TxJournal {
  private readonly segments: Segment[] = [];
  private current!: { seg: Segment; file: SegmentFile };
  /** The segment after the current one, created (and its first chunk zero-filled) while the current one fills up. */
  private next: Promise<SegmentFile> | null = null;
  private readonly commit: GroupCommit;
  /** Segment of each journaled transaction still live. */
  private readonly segmentOf = new Map<string, Segment>();
  /** Records pending for the group being written: txid per record, in order. */
  private pendingIds: string[] = [];
  /** Groups take their places in the log one after another (a rotation between two is awaited). */
  private placing: Promise<unknown> = Promise.resolve();
  /** The highest segment number whose file was created (or is being created). */
  private lastCreated = 0;
  /** Closing of segments written before the current one (after their writes end). */
  private closing: Promise<unknown>[] = [];
  /**
   * Whether a segment kept may hold a record (a transaction or a cancel). False while none was written since
   * the last reset (or found at open): a dev chain with automine skips the journal, and its evm_revert then
   * has nothing to replace (reset).
   */
  private holdsRecords = false;

  private constructor(
    readonly dir: string,
    private readonly sizes: SegmentSizes,
    maxInFlight: number,
  ) {
    this.commit = new GroupCommit({ write: (records) => this.writeGroup(records) }, maxInFlight);
  }

  /**
   * Open the journal in `dir`, returning it with the transactions it holds in arrival order (the caller
   * replays them through admission, then prunes what did not return to the pool).
   */
  static async open(
    dir: string,
    opts: Partial<JournalOptions> = {},
  ): Promise<{ journal: TxJournal; replay: SignedTransaction[] }> {
    mkdirSync(dir, { recursive: true });
    const { segmentBytes, chunkBytes, maxInFlight } = { ...DEFAULT_JOURNAL_OPTIONS, ...opts };
    const journal = new TxJournal(dir, { segmentBytes, chunkBytes }, maxInFlight);
    const names = readdirSync(dir)
      .filter((n) => /^seg-\d{10}\.log$/.test(n))
      .sort();
    // Records net of cancels per transaction, and the transactions with a record left, in the order of the
    // record that (re)made them replayable: arrival order.
    const records = new Map<string, number>();
    const held = new Map<string, { tx: SignedTransaction; seg: Segment }>();
    let last = 0;
    for (const name of names) {
      const seq = Number(name.slice(4, 14));
      last = Math.max(last, seq);
      const path = join(dir, name);
      const { payloads } = readFrames(readFileSync(path));
      if (payloads.length > 0) journal.holdsRecords = true;
      const seg: Segment = { seq, path, live: new Set(), writing: 0 };
      for (const p of payloads) {
        const cancelled = cancelledTxid(p);
        if (cancelled !== null) {
          const n = records.get(cancelled) ?? 0;
          if (n === 0) continue; // its record was in a segment already deleted
          records.set(cancelled, n - 1);
          if (n === 1) held.delete(cancelled);
          continue;
        }
        let tx: SignedTransaction;
        try {
          tx = decodeTransaction(p);
        } catch {
          continue; // an undecodable record (a format this node cannot read) is skipped, never fatal
        }
        const n = records.get(tx.txid) ?? 0;
        records.set(tx.txid, n + 1);
        if (n === 0) held.set(tx.txid, { tx, seg });
      }
      journal.segments.push(seg);
    }
    const replay: SignedTransaction[] = [];
    for (const { tx, seg } of held.values()) {
      seg.live.add(tx.txid);
      journal.segmentOf.set(tx.txid, seg);
      replay.push(tx);
    }
    await journal.startSegment(last + 1, journal.createSegment(last + 1));
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
  get stats(): { groups: number; records: number; writeMs: number; maxWriteMs: number; waitMs: number } {
    const { groups, records, writeMs, maxWriteMs, waitMs } = this.commit;
    const round1 = (ms: number) => Math.round(ms * 10) / 10;
    return { groups, records, writeMs: Math.round(writeMs), maxWriteMs: round1(maxWriteMs), waitMs: Math.round(waitMs) };
  }

  /** Make segment `seq` (its file being created by `file`) the one written; the previous one is closed. */
  private async startSegment(seq: number, file: Promise<SegmentFile>): Promise<void> {
    const seg: Segment = { seq, path: join(this.dir, segmentName(seq)), live: new Set(), writing: 0 };
    const old = this.current;
    this.current = { seg, file: await file };
    this.segments.push(seg);
    // Writes to the old file may still run; it closes after them, off the path of the next group.
    if (old) this.closing.push(old.file.close().catch(() => undefined));
  }

  private createSegment(seq: number): Promise<SegmentFile> {
    this.lastCreated = seq;
    return SegmentFile.create(join(this.dir, segmentName(seq)), this.dir, this.sizes);
  }

  private async rotate(): Promise<void> {
    const seq = this.current.seg.seq + 1;
    const next = this.next ?? this.createSegment(seq);
    this.next = null;
    await this.startSegment(seq, next);
  }

  /** Durable once resolved. */
  append(tx: SignedTransaction): Promise<void> {
    this.pendingIds.push(tx.txid);
    return this.commit.append(frame(encodeTransaction(tx)));
  }

  /**
   * Cancel the last record of `tx` (written before its admission finished, and the admission refused it): from
   * when this resolves, a restart does not replay that record. Written after the record, so it is durable only
   * once the record's group is settled too.
   */
  cancel(tx: SignedTransaction): Promise<void> {
    this.pendingIds.push('');
    return this.commit.append(frame(cancelRecord(tx.txid)));
  }

  /**
   * The group commit's sink: takes the group's place (in the order groups are handed over, which is the log's
   * order), then writes it; another group's write may run meanwhile. In the thread pool, never on the main
   * thread: a slow disk (another process's fsyncs) would stall every request.
   */
  private writeGroup(records: readonly Buffer[]): Promise<void> {
    this.holdsRecords = true;
    const ids = this.pendingIds.splice(0, records.length);
    let bytes = 0;
    for (const r of records) bytes += r.length;
    const place = this.placing.then(async () => {
      const { file } = this.current;
      if (file.broken || !file.fits(bytes)) await this.rotate();
      const { seg } = this.current;
      seg.writing++;
      return { seg, file: this.current.file, at: this.current.file.reserve(bytes) };
    });
    this.placing = place.catch(() => undefined);
    return place.then(async ({ seg, file, at }) => {
      try {
        await file.write(records, at, bytes);
        for (const id of ids) {
          if (id === '' || this.segmentOf.has(id)) continue;
          seg.live.add(id);
          this.segmentOf.set(id, seg);
        }
      } finally {
        seg.writing--;
      }
      if (file.nearlyFull && !this.next && this.lastCreated <= seg.seq) {
        this.next = this.createSegment(seg.seq + 1);
        // A failure surfaces at the rotation that awaits it.
        this.next.catch(() => undefined);
      }
    });
  }

  /**
   * Forget transactions that are no longer pending (in a block, or dropped); then delete every older segment
   * none of whose transactions `isPending` still holds (the file is removed in the thread pool).
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
      if (seg === this.current.seg || seg.writing > 0) continue;
      for (const id of seg.live) {
        if (isPending(id)) continue;
        seg.live.delete(id);
        this.segmentOf.delete(id);
      }
      if (seg.live.size > 0) continue;
      removeSegment(seg.path);
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
    await this.commit.drain(); // what was admitted before the reset goes to the segments it deletes
    const old = await this.commit.exclusive(async () => {
      // No record to take back (nothing journaled since the last reset): a new segment, zero-filled and
      // synced, would replace empty files with an empty file. A dev chain's evm_revert comes here per test.
      if (!this.holdsRecords) return [];
      const segments = this.segments.splice(0);
      this.segmentOf.clear();
      const rotated = this.placing.then(() => this.rotate());
      this.placing = rotated.catch(() => undefined);
      await rotated;
      this.holdsRecords = false;
      return segments;
    });
    await Promise.all(txs.map((tx) => this.append(tx)));
    for (const seg of old) removeSegment(seg.path);
  }

  async close(): Promise<void> {
    await this.commit.drain();
    await this.current.file.close();
    await Promise.all(this.closing);
    const next = await this.next?.catch(() => null);
    // A prepared segment never written holds no record; replay would skip it, but it need not outlive the node.
    if (next) {
      await next.close();
      await unlink(join(this.dir, segmentName(this.current.seg.seq + 1))).catch(() => undefined);
    }
  }
}
