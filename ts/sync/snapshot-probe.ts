/**
 * Reading a few keys of a snapshot's state before the whole state is fetched (docs/p2p.md, "State sync",
 * "Verifying the snapshot block"): a key's hash names the one subtree of the verified manifest that can hold it
 * (none: the key is absent, since the manifest's subtrees recompute the state root), and that subtree's chunk,
 * verified on its own, holds exactly the state under it. So the validator set a snapshot's state holds can be
 * checked against the block's certificate at the cost of a chunk or two, and a forged state refused before
 * anything of it is fetched or written.
 */
import { crypto } from '../crypto/index.js';
import { type SnapshotManifest, verifyChunk } from '../snapshot/index.js';
import { type KeyStr, type StateReader, keyBytes, keyStr } from '../state/index.js';

/** A key of a chunk not fetched yet was read. */
class ChunkNeeded extends Error {
  constructor(readonly index: number) {
    super(`snapshot chunk ${index} is needed`);
  }
}

/** A state reader over the chunks of a verified manifest fetched so far. */
export class ChunkedState implements StateReader {
  private readonly entries = new Map<number, Map<KeyStr, Buffer>>();
  /** Each subtree's chunk. */
  private readonly chunkOfSubtree: number[] = [];
  /** The first chunk a read wanted and did not have (set even when the reader caught the ChunkNeeded thrown). */
  needed: number | null = null;

  constructor(private readonly manifest: SnapshotManifest) {
    manifest.chunks.forEach((c, i) => {
      for (let s = c.first; s < c.first + c.count; s++) this.chunkOfSubtree[s] = i;
    });
  }

  /** The chunk that holds `key` if the state has it, or null when no subtree covers its hash (absent). */
  chunkOf(key: KeyStr): number | null {
    const hash = Buffer.from(crypto().sha256(keyBytes(key))).toString('hex');
    // Subtrees are sorted and prefix-free: the one covering `hash` is the last whose prefix is <= it.
    const subs = this.manifest.subtrees;
    let lo = 0;
    let hi = subs.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (subs[mid].prefix <= hash) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && hash.startsWith(subs[at].prefix) ? this.chunkOfSubtree[at] : null;
  }

  /** Verify chunk `index` (SnapshotChunkError / SnapshotManifestError when it is not the manifest's) and hold it. */
  add(index: number, bytes: Buffer): void {
    const map = new Map<KeyStr, Buffer>();
    for (const e of verifyChunk(this.manifest, index, bytes)) map.set(keyStr(e.key), Buffer.from(e.value));
    this.entries.set(index, map);
  }

  get(key: KeyStr): Buffer | undefined {
    const index = this.chunkOf(key);
    if (index === null) return undefined;
    const map = this.entries.get(index);
    if (map === undefined) {
      this.needed ??= index;
      throw new ChunkNeeded(index);
    }
    return map.get(key);
  }
}

/** At most this many chunks are fetched to read what a check needs (the validator set: one to three keys). */
export const PROBE_MAX_CHUNKS = 8;

/**
 * `read` run over the snapshot's state, fetching each chunk it reads from through `fetch`, which hands a peer's
 * bytes to `state.add` (they verify there, or the peer is to blame and the next one asked) and returns the bytes
 * added, or null when no peer served the chunk well. Returns `read`'s result and the chunks fetched (by index: the
 * restorer takes them), or null when a chunk could not be had.
 */
export async function readSnapshotState<T>(
  manifest: SnapshotManifest,
  read: (state: StateReader) => T,
  fetch: (index: number, state: ChunkedState) => Promise<Buffer | null>,
): Promise<{ value: T; chunks: Map<number, Buffer> } | null> {
  const state = new ChunkedState(manifest);
  const chunks = new Map<number, Buffer>();
  for (let fetched = 0; ; fetched++) {
    state.needed = null;
    let value: T | undefined;
    let error: unknown = null;
    try {
      value = read(state);
    } catch (err) {
      error = err;
    }
    // A chunk was missing, whatever `read` made of it (it may catch errors): fetch it and read again.
    const index = state.needed as number | null;
    if (index === null) {
      if (error !== null) throw error;
      return { value: value as T, chunks };
    }
    if (fetched >= PROBE_MAX_CHUNKS) throw new Error(`reading the snapshot's state needed more than ${PROBE_MAX_CHUNKS} chunks`);
    const bytes = await fetch(index, state);
    if (bytes === null) return null;
    chunks.set(index, bytes);
  }
}
