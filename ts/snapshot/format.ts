/**
 * Snapshot format 1 (docs/p2p.md, "State sync"): a manifest listing the state trie's subtrees (prefix, entries,
 * node hash) and the chunks that carry them, and the chunk encoding. Both are canonical: the same state at the
 * same height gives the same bytes on every node, so peers offering one snapshot offer one id.
 */
import { crypto } from '../crypto/index.js';
import { SnapshotManifestError } from './errors.js';

export const SNAPSHOT_FORMAT = 1;
/** A subtree is split by the next nibble while its entries take more than this. */
export const SUBTREE_MAX_BYTES = 2 * 2 ** 20;
/** Chunks pack consecutive subtrees up to this many bytes (one subtree may be larger only if it is one entry). */
export const CHUNK_TARGET_BYTES = 2 * 2 ** 20;
/** The largest chunk a receiver accepts. */
export const CHUNK_MAX_BYTES = 4 * 2 ** 20;
/** The largest manifest a receiver accepts (encoded), and its largest chunk count. */
export const MANIFEST_MAX_BYTES = 16 * 2 ** 20;
export const MANIFEST_MAX_CHUNKS = 65_536;
/** Nibbles of the longest subtree prefix (a key hash has 64; real snapshots use 2 to 4). */
export const PREFIX_MAX_NIBBLES = 16;

/** One subtree of the state trie: the entries whose key hash starts with `prefix` (hex nibbles). */
export interface SubtreeRef {
  prefix: string;
  /** Entries under the prefix (0/1/many is bound by the root; beyond that informational). */
  entries: number;
  /** The trie node at the prefix: the leaf hash for one entry, else the branch hash (hex). */
  hash: string;
}

/** One chunk: the subtrees first..first+count-1, its length and SHA-256 (hex). */
export interface ChunkRef {
  first: number;
  count: number;
  bytes: number;
  hash: string;
}

export interface SnapshotManifest {
  format: number;
  height: number;
  /** The snapshot block's hash and state root, hex without 0x (as in blocks). */
  block_hash: string;
  state_root: string;
  entries: number;
  subtrees: SubtreeRef[];
  chunks: ChunkRef[];
}

/** The manifest's canonical bytes (keys in a fixed order, subtrees as [prefix, entries, hash] triples). */
export function encodeManifest(m: SnapshotManifest): Buffer {
  const canonical = {
    format: m.format,
    height: m.height,
    block_hash: m.block_hash,
    state_root: m.state_root,
    entries: m.entries,
    subtrees: m.subtrees.map((s) => [s.prefix, s.entries, s.hash]),
    chunks: m.chunks.map((c) => ({ first: c.first, count: c.count, bytes: c.bytes, hash: c.hash })),
  };
  return Buffer.from(JSON.stringify(canonical), 'utf8');
}

/** The snapshot's id: SHA-256 of the manifest's canonical bytes (hex). */
export function manifestId(m: SnapshotManifest): string {
  return Buffer.from(crypto().sha256(encodeManifest(m))).toString('hex');
}

const HASH_RE = /^[0-9a-f]{64}$/;
const PREFIX_RE = /^[0-9a-f]+$/;
const isCount = (n: unknown, min: number): n is number => Number.isSafeInteger(n) && (n as number) >= min;

/**
 * Parse a manifest's bytes (a file, a peer's answer) into its shape, refusing anything malformed: the checks
 * that need no hashing (verifyManifest does the rest). Throws SnapshotManifestError.
 */
export function decodeManifest(bytes: Uint8Array): SnapshotManifest {
  if (bytes.length > MANIFEST_MAX_BYTES)
    throw new SnapshotManifestError(`manifest of ${bytes.length} bytes is over ${MANIFEST_MAX_BYTES}`);
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new SnapshotManifestError('manifest is not JSON');
  }
  const o = raw as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new SnapshotManifestError('manifest is not a JSON object');
  if (o.format !== SNAPSHOT_FORMAT)
    throw new SnapshotManifestError(`manifest format ${String(o.format)} is not ${SNAPSHOT_FORMAT}`);
  if (!isCount(o.height, 1)) throw new SnapshotManifestError('manifest height is not an integer >= 1');
  for (const f of ['block_hash', 'state_root'] as const)
    if (typeof o[f] !== 'string' || !HASH_RE.test(o[f] as string))
      throw new SnapshotManifestError(`manifest ${f} is not 32 bytes of hex`);
  if (!isCount(o.entries, 0)) throw new SnapshotManifestError('manifest entries is not an integer >= 0');
  if (!Array.isArray(o.subtrees) || !Array.isArray(o.chunks))
    throw new SnapshotManifestError('manifest subtrees or chunks is not a list');
  if (o.chunks.length > MANIFEST_MAX_CHUNKS)
    throw new SnapshotManifestError(`manifest has more than ${MANIFEST_MAX_CHUNKS} chunks`);
  const subtrees: SubtreeRef[] = o.subtrees.map((s: unknown, i: number) => {
    const t = s as unknown[];
    if (!Array.isArray(t) || t.length !== 3) throw new SnapshotManifestError(`subtree ${i} is not [prefix, entries, hash]`);
    const [prefix, entries, hash] = t;
    if (typeof prefix !== 'string' || prefix.length < 1 || prefix.length > PREFIX_MAX_NIBBLES || !PREFIX_RE.test(prefix))
      throw new SnapshotManifestError(`subtree ${i} prefix is not 1-${PREFIX_MAX_NIBBLES} hex nibbles`);
    if (!isCount(entries, 1)) throw new SnapshotManifestError(`subtree ${i} entries is not an integer >= 1`);
    if (typeof hash !== 'string' || !HASH_RE.test(hash))
      throw new SnapshotManifestError(`subtree ${i} hash is not 32 bytes of hex`);
    return { prefix, entries, hash };
  });
  const chunks: ChunkRef[] = o.chunks.map((c: unknown, i: number) => {
    const r = c as Record<string, unknown>;
    if (typeof r !== 'object' || r === null) throw new SnapshotManifestError(`chunk ${i} is not an object`);
    if (!isCount(r.first, 0) || !isCount(r.count, 1)) throw new SnapshotManifestError(`chunk ${i} first/count are not integers`);
    if (!isCount(r.bytes, 5) || r.bytes > CHUNK_MAX_BYTES)
      throw new SnapshotManifestError(`chunk ${i} bytes is not 5..${CHUNK_MAX_BYTES}`);
    if (typeof r.hash !== 'string' || !HASH_RE.test(r.hash))
      throw new SnapshotManifestError(`chunk ${i} hash is not 32 bytes of hex`);
    return { first: r.first, count: r.count, bytes: r.bytes, hash: r.hash };
  });
  return {
    format: SNAPSHOT_FORMAT,
    height: o.height,
    block_hash: o.block_hash as string,
    state_root: o.state_root as string,
    entries: o.entries,
    subtrees,
    chunks,
  };
}

/** One state entry of a chunk: the raw key bytes (no table prefix) and the value. */
export interface ChunkEntry {
  key: Buffer;
  value: Buffer;
}

/** Bytes an entry takes in a chunk. */
export const entryBytes = (keyLength: number, valueLength: number): number => 2 + keyLength + 4 + valueLength;
const CHUNK_HEADER = 5;

/** A chunk's bytes: format, entry count, then the entries in the given order (ascending key hash). */
export function encodeChunk(entries: readonly ChunkEntry[]): Buffer {
  let size = CHUNK_HEADER;
  for (const e of entries) size += entryBytes(e.key.length, e.value.length);
  const b = Buffer.allocUnsafe(size);
  b[0] = SNAPSHOT_FORMAT;
  b.writeUInt32BE(entries.length, 1);
  let o = CHUNK_HEADER;
  for (const e of entries) {
    o = b.writeUInt16BE(e.key.length, o);
    o += e.key.copy(b, o);
    o = b.writeUInt32BE(e.value.length, o);
    o += e.value.copy(b, o);
  }
  return b;
}

/** A chunk's entries (views into `bytes`); null when the bytes are not exactly a format-1 chunk. */
export function decodeChunk(bytes: Buffer): ChunkEntry[] | null {
  if (bytes.length < CHUNK_HEADER || bytes[0] !== SNAPSHOT_FORMAT) return null;
  const n = bytes.readUInt32BE(1);
  // Each entry takes at least 6 bytes: a count beyond that is a lie, refused before allocating for it.
  if (n > (bytes.length - CHUNK_HEADER) / 6) return null;
  const out: ChunkEntry[] = new Array(n);
  let o = CHUNK_HEADER;
  for (let i = 0; i < n; i++) {
    if (o + 2 > bytes.length) return null;
    const kl = bytes.readUInt16BE(o);
    o += 2;
    if (o + kl + 4 > bytes.length) return null;
    const key = bytes.subarray(o, o + kl);
    o += kl;
    const vl = bytes.readUInt32BE(o);
    o += 4;
    if (o + vl > bytes.length) return null;
    out[i] = { key, value: bytes.subarray(o, o + vl) };
    o += vl;
  }
  return o === bytes.length ? out : null;
}
