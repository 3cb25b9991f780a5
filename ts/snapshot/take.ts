/**
 * Taking a snapshot of the state at a durable block (docs/p2p.md, "State sync", "Taking"): the `S` table is
 * scanned through one RocksDB iterator opened synchronously by startSnapshot (it sees the state of that block
 * while later blocks are written), every entry routed by the first byte of its key hash to one of 256 buckets
 * (spilled to files past SPILL_BYTES each), then each bucket is sorted, cut into subtrees and packed into chunk
 * files, one bucket per turn of the event loop. The result's root must be the block's before the directory is
 * published.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { crypto } from '../crypto/index.js';
import { type KvStore, P, prefixEnd } from '../storage/index.js';
import {
  CHUNK_MAX_BYTES,
  CHUNK_TARGET_BYTES,
  type ChunkEntry,
  type ChunkRef,
  SNAPSHOT_FORMAT,
  SUBTREE_MAX_BYTES,
  type SnapshotManifest,
  type SubtreeRef,
  encodeChunk,
  encodeManifest,
  entryBytes,
} from './format.js';
import { leafHashes, nibbleAt, nodeHash, rootFromSubtrees } from './subtree-hash.js';

/** The block whose state is snapshotted (hashes hex without 0x, as in blocks). */
export interface SnapshotBlock {
  height: number;
  hash: string;
  stateRoot: string;
}

/** A bucket's records are written to its file once they take this much memory. */
const SPILL_BYTES = 256 * 1024;

/** How a snapshot is cut (the defaults are format 1's; tests cut small states finely). */
export interface CutLimits {
  subtreeMaxBytes: number;
  chunkTargetBytes: number;
  spillBytes: number;
}

export const DEFAULT_CUT_LIMITS: CutLimits = {
  subtreeMaxBytes: SUBTREE_MAX_BYTES,
  chunkTargetBytes: CHUNK_TARGET_BYTES,
  spillBytes: SPILL_BYTES,
};
const BUCKETS = 256;
/** Rows per read of the scan: the rows of one read are hashed and bucketed in one turn of the event loop. */
const SCAN_ROWS = 2_000;
export const MANIFEST_FILE = 'manifest.json';
export const chunkFile = (index: number): string => `chunk-${index}.bin`;
/** The directory a snapshot is built in before it is renamed to its height. */
export const tempDirName = (height: number): string => `${height}.tmp`;

/** Stop a snapshot being taken (a shutdown): the scan and the cut end at their next step. */
export class SnapshotAbort {
  aborted = false;
}

export class SnapshotAbortedError extends Error {
  constructor(height: number) {
    super(`snapshot of height ${height} aborted`);
    this.name = 'SnapshotAbortedError';
  }
}

/** Buckets of spill records (key hash 32 · u16 key length · key · u32 value length · value) by key-hash byte. */
class Buckets {
  private readonly parts: Buffer[][] = Array.from({ length: BUCKETS }, () => []);
  private readonly held = new Array<number>(BUCKETS).fill(0);
  private readonly files = new Array<number | null>(BUCKETS).fill(null);
  entries = 0;

  constructor(
    private readonly dir: string,
    private readonly spillBytes: number,
  ) {}

  add(key: Buffer, value: Buffer): void {
    const kh = crypto().sha256(key);
    const rec = Buffer.allocUnsafe(32 + entryBytes(key.length, value.length));
    rec.set(kh, 0);
    let o = rec.writeUInt16BE(key.length, 32);
    o += key.copy(rec, o);
    o = rec.writeUInt32BE(value.length, o);
    value.copy(rec, o);
    const b = kh[0];
    this.parts[b].push(rec);
    this.held[b] += rec.length;
    this.entries++;
    if (this.held[b] >= this.spillBytes) this.spill(b);
  }

  private spill(b: number): void {
    let fd = this.files[b];
    if (fd === null) this.files[b] = fd = openSync(this.path(b), 'a');
    writeSync(fd, Buffer.concat(this.parts[b]));
    this.parts[b] = [];
    this.held[b] = 0;
  }

  private path(b: number): string {
    return join(this.dir, `bucket-${b}`);
  }

  /** Every record of bucket b (its file, then what is still in memory); the file is removed. */
  take(b: number): Buffer {
    const fd = this.files[b];
    const mem = Buffer.concat(this.parts[b]);
    this.parts[b] = [];
    if (fd === null) return mem;
    closeSync(fd);
    this.files[b] = null;
    const disk = readFileSync(this.path(b));
    rmSync(this.path(b), { force: true });
    return mem.length === 0 ? disk : Buffer.concat([disk, mem]);
  }

  close(): void {
    for (let b = 0; b < BUCKETS; b++) {
      const fd = this.files[b];
      if (fd !== null) closeSync(fd);
      this.files[b] = null;
    }
  }
}

/** Entries of one bucket, ascending by key hash, with their leaf hashes and cumulative chunk bytes. */
interface SortedBucket {
  keyHashes: Buffer[];
  entries: ChunkEntry[];
  leaves: Uint8Array[];
  /** bytesBefore[i]: chunk bytes of entries 0..i-1. */
  bytesBefore: number[];
}

function sortBucket(data: Buffer): SortedBucket {
  const recs: { kh: Buffer; e: ChunkEntry }[] = [];
  for (let o = 0; o < data.length; ) {
    const kh = data.subarray(o, o + 32);
    const kl = data.readUInt16BE(o + 32);
    const key = data.subarray(o + 34, o + 34 + kl);
    const vl = data.readUInt32BE(o + 34 + kl);
    const value = data.subarray(o + 38 + kl, o + 38 + kl + vl);
    recs.push({ kh, e: { key, value } });
    o += 38 + kl + vl;
  }
  recs.sort((a, b) => Buffer.compare(a.kh, b.kh));
  const keyHashList = recs.map((r) => r.kh);
  const entries = recs.map((r) => r.e);
  const bytesBefore = [0];
  for (const e of entries) bytesBefore.push(bytesBefore[bytesBefore.length - 1] + entryBytes(e.key.length, e.value.length));
  return {
    keyHashes: keyHashList,
    entries,
    leaves: leafHashes(
      keyHashList,
      entries.map((e) => e.value),
    ),
    bytesBefore,
  };
}

/** Packs consecutive subtrees into chunk files up to a target size. */
class ChunkPacker {
  readonly chunks: ChunkRef[] = [];
  private entries: ChunkEntry[] = [];
  private bytes = 0;
  private first = 0;
  private count = 0;

  constructor(
    private readonly dir: string,
    private readonly targetBytes: number,
  ) {}

  async add(subtree: number, entries: ChunkEntry[], bytes: number): Promise<void> {
    if (this.count > 0 && this.bytes + bytes > this.targetBytes) await this.flush();
    if (this.count === 0) this.first = subtree;
    for (const e of entries) this.entries.push(e);
    this.bytes += bytes;
    this.count++;
  }

  async flush(): Promise<void> {
    if (this.count === 0) return;
    const body = encodeChunk(this.entries);
    const index = this.chunks.length;
    if (body.length > CHUNK_MAX_BYTES)
      throw new Error(`snapshot chunk ${index} would take ${body.length} bytes (one state entry over ${CHUNK_MAX_BYTES})`);
    await writeDurable(join(this.dir, chunkFile(index)), body);
    this.chunks.push({
      first: this.first,
      count: this.count,
      bytes: body.length,
      hash: Buffer.from(crypto().sha256(body)).toString('hex'),
    });
    this.entries = [];
    this.bytes = 0;
    this.count = 0;
  }
}

async function writeDurable(path: string, data: Buffer): Promise<void> {
  const f = await open(path, 'w');
  try {
    await f.writeFile(data);
    await f.sync();
  } finally {
    await f.close();
  }
}

async function syncDir(path: string): Promise<void> {
  const d = await open(path, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Start a snapshot of `block`'s state into `<root>/<height>/`. Call it when `S` holds exactly that block's state
 * (the chain's `durable` event): the iterator is opened before this returns, so later writes are not seen. The
 * promise resolves with the manifest once the directory is published; on failure or abort the temporary
 * directory is removed.
 */
export function startSnapshot(
  db: KvStore,
  block: SnapshotBlock,
  root: string,
  abort = new SnapshotAbort(),
  limits: CutLimits = DEFAULT_CUT_LIMITS,
): Promise<SnapshotManifest> {
  const tmp = join(root, tempDirName(block.height));
  try {
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
  } catch (err) {
    return Promise.reject(err);
  }
  const buckets = new Buckets(tmp, limits.spillBytes);
  const table = Buffer.from([P.state]);
  // Opened now, synchronously: RocksDB pins the view at the iterator's creation.
  const scanned = db.scan({ gte: table, lt: prefixEnd(table), chunk: SCAN_ROWS }, (k, v) => {
    if (abort.aborted) throw new SnapshotAbortedError(block.height);
    buckets.add(k.subarray(1), v);
  });
  return (async () => {
    try {
      await scanned;
      const manifest = await cut(buckets, block, tmp, abort, limits);
      await writeDurable(join(tmp, MANIFEST_FILE), encodeManifest(manifest));
      const final = join(root, String(block.height));
      await rm(final, { recursive: true, force: true });
      await rename(tmp, final);
      await syncDir(root);
      return manifest;
    } catch (err) {
      buckets.close();
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
  })();
}

/** Cut the buckets into subtrees and chunks, one bucket per turn; checks the root against the block's. */
async function cut(
  buckets: Buckets,
  block: SnapshotBlock,
  dir: string,
  abort: SnapshotAbort,
  limits: CutLimits,
): Promise<SnapshotManifest> {
  const subtrees: SubtreeRef[] = [];
  const hashes: Uint8Array[] = [];
  const packer = new ChunkPacker(dir, limits.chunkTargetBytes);
  for (let b = 0; b < BUCKETS; b++) {
    if (abort.aborted) throw new SnapshotAbortedError(block.height);
    const sorted = sortBucket(buckets.take(b));
    const ranges: [number, number, number][] = [];
    splitRange(sorted, 0, sorted.entries.length, 2, limits.subtreeMaxBytes, ranges);
    for (const [lo, hi, depth] of ranges) {
      const hash = nodeHash(sorted.keyHashes, sorted.leaves, lo, hi, depth) as Uint8Array;
      const prefix = sorted.keyHashes[lo].toString('hex', 0, 32).slice(0, depth);
      subtrees.push({ prefix, entries: hi - lo, hash: Buffer.from(hash).toString('hex') });
      hashes.push(hash);
      await packer.add(subtrees.length - 1, sorted.entries.slice(lo, hi), sorted.bytesBefore[hi] - sorted.bytesBefore[lo]);
    }
    await nextTurn();
  }
  await packer.flush();
  const root = Buffer.from(
    rootFromSubtrees(subtrees.map((s, i) => ({ prefix: s.prefix, entries: s.entries, hash: hashes[i] }))),
  ).toString('hex');
  if (root !== block.stateRoot)
    throw new Error(
      `snapshot of height ${block.height} gives state root ${root}, not the block's ${block.stateRoot}: the state read was not that block's`,
    );
  return {
    format: SNAPSHOT_FORMAT,
    height: block.height,
    block_hash: block.hash,
    state_root: block.stateRoot,
    entries: buckets.entries,
    subtrees,
    chunks: packer.chunks,
  };
}

/** Ranges [lo, hi, depth] of subtrees no larger than maxBytes (or single entries), in order. */
function splitRange(
  s: SortedBucket,
  lo: number,
  hi: number,
  depth: number,
  maxBytes: number,
  out: [number, number, number][],
): void {
  if (hi <= lo) return;
  if (hi - lo === 1 || s.bytesBefore[hi] - s.bytesBefore[lo] <= maxBytes) {
    out.push([lo, hi, depth]);
    return;
  }
  for (let i = lo; i < hi; ) {
    const nib = nibbleAt(s.keyHashes[i], depth);
    let j = i + 1;
    while (j < hi && nibbleAt(s.keyHashes[j], depth) === nib) j++;
    splitRange(s, i, j, depth + 1, maxBytes, out);
    i = j;
  }
}
