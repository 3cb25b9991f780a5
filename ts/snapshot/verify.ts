/**
 * Checking a snapshot piece by piece (docs/p2p.md, "State sync"): a manifest against the state root it names
 * (the joining node then compares that root with the block it trusts), and each chunk on its own against the
 * manifest's subtree hashes, so a bad chunk is pinned on the peer that sent it.
 */
import { crypto } from '../crypto/index.js';
import { ForgedManifestRootError, SnapshotChunkError, SnapshotManifestError } from './errors.js';
import { CHUNK_MAX_BYTES, type ChunkEntry, type SnapshotManifest, decodeChunk } from './format.js';
import { keyHashes, leafHashes, nodeHash, rootFromSubtrees } from './subtree-hash.js';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/**
 * Throws SnapshotManifestError unless the manifest's subtrees are sorted and prefix-free, their entries add up,
 * its chunks cover them in order, and (ForgedManifestRootError) the subtrees recompute its state root — and,
 * when `trustedRoot` is given (hex, the trusted block's), that root is this one.
 */
export function verifyManifest(m: SnapshotManifest, trustedRoot?: string): void {
  const subs = m.subtrees;
  let entries = 0;
  for (let i = 0; i < subs.length; i++) {
    entries += subs[i].entries;
    if (i === 0) continue;
    const a = subs[i - 1].prefix;
    const b = subs[i].prefix;
    if (!(a < b)) throw new SnapshotManifestError(`subtree ${i} is not after subtree ${i - 1}`);
    if (b.startsWith(a)) throw new SnapshotManifestError(`subtree ${i} lies inside subtree ${i - 1}`);
  }
  if (entries !== m.entries) throw new SnapshotManifestError(`subtrees hold ${entries} entries, the manifest says ${m.entries}`);
  let next = 0;
  for (let i = 0; i < m.chunks.length; i++) {
    const c = m.chunks[i];
    if (c.first !== next) throw new SnapshotManifestError(`chunk ${i} starts at subtree ${c.first}, not ${next}`);
    next += c.count;
  }
  if (next !== subs.length) throw new SnapshotManifestError(`chunks cover ${next} subtrees of ${subs.length}`);
  const root = hex(
    rootFromSubtrees(subs.map((s) => ({ prefix: s.prefix, entries: s.entries, hash: Buffer.from(s.hash, 'hex') }))),
  );
  if (root !== m.state_root) throw new ForgedManifestRootError(m.state_root, root);
  if (trustedRoot !== undefined && trustedRoot.replace(/^0x/, '').toLowerCase() !== root)
    throw new ForgedManifestRootError(trustedRoot, root);
}

/**
 * The entries of chunk `index` of a verified manifest, or SnapshotChunkError (the sender's fault) when the
 * bytes are not exactly the state under the chunk's subtrees. When they are but the manifest's length or hash of
 * the chunk differs, the manifest lied (the encoding is canonical): SnapshotManifestError.
 */
export function verifyChunk(m: SnapshotManifest, index: number, bytes: Buffer): ChunkEntry[] {
  const ref = m.chunks[index];
  if (ref === undefined) throw new SnapshotChunkError(index, `the manifest has ${m.chunks.length} chunks`);
  if (bytes.length > CHUNK_MAX_BYTES) throw new SnapshotChunkError(index, `${bytes.length} bytes is over ${CHUNK_MAX_BYTES}`);
  const entries = decodeChunk(bytes);
  if (entries === null) throw new SnapshotChunkError(index, 'not a well-formed chunk');
  const kh = keyHashes(entries.map((e) => e.key));
  const khHex = kh.map((h) => h.toString('hex'));
  for (let i = 1; i < kh.length; i++)
    if (Buffer.compare(kh[i - 1], kh[i]) >= 0)
      throw new SnapshotChunkError(index, `entry ${i} is not in ascending key-hash order`);
  const leaves = leafHashes(
    kh,
    entries.map((e) => e.value),
  );
  let at = 0;
  for (let s = ref.first; s < ref.first + ref.count; s++) {
    const sub = m.subtrees[s];
    const start = at;
    while (at < kh.length && khHex[at].startsWith(sub.prefix)) at++;
    if (start === at) throw new SnapshotChunkError(index, `no entry under subtree ${sub.prefix}`);
    const got = nodeHash(kh, leaves, start, at, sub.prefix.length) as Uint8Array;
    if (hex(got) !== sub.hash)
      throw new SnapshotChunkError(index, `subtree ${sub.prefix} hashes to ${hex(got)}, not ${sub.hash}`);
    // Above two entries the count is not bound by the hashes: a different count here means the manifest lied.
    if (at - start !== sub.entries && sub.entries > 1 && at - start > 1)
      throw new SnapshotManifestError(`subtree ${sub.prefix} holds ${at - start} entries, the manifest says ${sub.entries}`);
  }
  if (at !== kh.length) throw new SnapshotChunkError(index, `entry ${at} lies outside the chunk's subtrees`);
  if (bytes.length !== ref.bytes || hex(crypto().sha256(bytes)) !== ref.hash)
    throw new SnapshotManifestError(`chunk ${index}'s length or hash in the manifest is not its content's`);
  return entries;
}
