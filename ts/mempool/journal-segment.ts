/**
 * One journal segment file being written (docs/storage.md, "Journaled mempool"). The file is zero-filled
 * ahead of the writes, in chunks, so a group's write lands on blocks that are already allocated and initialized
 * and the file's size does not change: the write returns once its data is on disk (O_DSYNC), without a commit of
 * the filesystem's journal. An appending write changes the size, so each one had to commit ext4's journal, which
 * carries every other file's pending metadata (RocksDB's log and tables): measured 3-5x the latency and twice the
 * CPU of an overwrite here. Readers stop at the first zero length, so the zeros past the last record read as
 * the end of the segment.
 */
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { constants } from 'node:fs';

/** A new segment starts past this size; an old one is deleted once none of its transactions is pending. */
export const SEGMENT_BYTES = 16 * 1024 * 1024;
/** Zero-filled per step; the next step starts when less than half of one is left ahead of the writes. */
export const CHUNK_BYTES = 1024 * 1024;

/** Sizes of a segment (tests make them small to cross chunk and segment boundaries quickly). */
export interface SegmentSizes {
  segmentBytes: number;
  chunkBytes: number;
}

export const DEFAULT_SEGMENT_SIZES: SegmentSizes = { segmentBytes: SEGMENT_BYTES, chunkBytes: CHUNK_BYTES };

let zeros = Buffer.alloc(CHUNK_BYTES);
const zeroBytes = (n: number): Buffer => {
  if (zeros.length < n) zeros = Buffer.alloc(n);
  return zeros;
};

export class SegmentFile {
  /** End of the space taken by groups (written or being written). */
  private offset = 0;
  /** Bytes from the start that are zero-filled on disk or taken by groups before the zero-fill started. */
  private filled = 0;
  /** The zero-fill in flight, if any (a record never lands where it is writing). */
  private extending: Promise<void> | null = null;
  /** Writes in flight (closing waits for them). */
  private readonly writing = new Set<Promise<void>>();
  /** Set by a failed write: the records after it would sit behind a hole, so the journal moves on to a new file. */
  broken: unknown = null;

  private constructor(
    private readonly file: FileHandle,
    private readonly sizes: SegmentSizes,
  ) {}

  /** Create the file with its first chunk zero-filled and its directory entry durable. */
  static async create(path: string, dir: string, sizes = DEFAULT_SEGMENT_SIZES): Promise<SegmentFile> {
    const file = await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_DSYNC);
    const seg = new SegmentFile(file, sizes);
    try {
      await seg.extend();
      const d = await open(dir, constants.O_RDONLY);
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    } catch (err) {
      await file.close();
      await unlink(path).catch(() => undefined); // a later attempt creates it again
      throw err;
    }
    return seg;
  }

  /** Whether `bytes` more fit before the size where a new segment starts (an empty segment takes any group). */
  fits(bytes: number): boolean {
    return this.offset === 0 || this.offset + bytes <= this.sizes.segmentBytes;
  }

  /** True once the groups reach the segment's last chunk (time to prepare the next segment). */
  get nearlyFull(): boolean {
    return this.offset + this.sizes.chunkBytes >= this.sizes.segmentBytes;
  }

  /** Take the next `bytes` for one group; groups take their places in the order they are written in the log. */
  reserve(bytes: number): number {
    const at = this.offset;
    this.offset += bytes;
    return at;
  }

  /**
   * Write a group at the place `reserve` gave it; durable once resolved. Writes of different groups may run at
   * once. Past the zero-filled part a write extends the file: still durable, only slower.
   */
  write(records: readonly Buffer[], at: number, bytes: number): Promise<void> {
    const w = this.writeAt(records, at, bytes);
    this.writing.add(w);
    const forget = () => this.writing.delete(w);
    w.then(forget, forget);
    return w;
  }

  private async writeAt(records: readonly Buffer[], at: number, bytes: number): Promise<void> {
    if (this.broken) throw this.broken;
    // A zero-fill started after this place was taken begins past it; one started before may cover it.
    if (this.extending && at + bytes > this.filled) await this.extending;
    try {
      let done = 0;
      while (done < bytes) {
        // A short write (rare, but allowed) continues where it stopped.
        const { bytesWritten } = await this.file.writev(remaining(records, done), at + done);
        done += bytesWritten;
      }
    } catch (err) {
      this.broken ??= err;
      throw err;
    }
    if (at + bytes > this.filled) this.filled = at + bytes;
    this.extendAhead();
  }

  /** Zero-fill the next chunk in the background once less than half of one is left ahead of the groups. */
  private extendAhead(): void {
    const { chunkBytes, segmentBytes } = this.sizes;
    if (this.extending || this.filled >= segmentBytes || this.filled - this.offset >= chunkBytes / 2) return;
    this.extending = this.extend()
      // A failed zero-fill loses nothing: later groups extend the file themselves (slower, still durable).
      .catch(() => undefined)
      .finally(() => {
        this.extending = null;
      });
  }

  private async extend(): Promise<void> {
    // Past every place taken, so it never overwrites a group.
    const from = Math.max(this.filled, this.offset);
    const n = this.sizes.chunkBytes;
    await this.file.write(zeroBytes(n), 0, n, from);
    if (this.filled < from + n) this.filled = from + n;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.writing, this.extending]);
    await this.file.close();
  }
}

/** The records from byte `at` of their concatenation on. */
function remaining(records: readonly Buffer[], at: number): Buffer[] {
  if (at === 0) return records as Buffer[];
  const out: Buffer[] = [];
  let skip = at;
  for (const r of records) {
    if (skip >= r.length) {
      skip -= r.length;
      continue;
    }
    out.push(skip > 0 ? r.subarray(skip) : r);
    skip = 0;
  }
  return out;
}
