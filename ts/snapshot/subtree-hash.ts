/**
 * The state trie's node hashes computed from entries alone, with the rules of ts/state/trie.ts: a node at a
 * nibble prefix of the key hashes is absent (no entry), the entry's leaf hash (one entry, whatever its depth),
 * or the branch hash over its 16 children (two or more); the root is always a branch. So a subtree can be
 * checked from its own entries, and the root recomputed from the subtrees' hashes (docs/p2p.md, "State sync").
 */
import { crypto } from '../crypto/index.js';
import { branchPreimage, leafPreimage } from '../state/index.js';

/** The nibble of a key hash at a depth (0: the high nibble of the first byte). */
export const nibbleAt = (h: Uint8Array, depth: number): number => (depth & 1 ? h[depth >> 1] & 15 : h[depth >> 1] >> 4);

/** sha256 of each key, in order: one batched hash call (a chunk holds ~30,000 keys), views into its result. */
export function keyHashes(keys: readonly Uint8Array[]): Buffer[] {
  return crypto()
    .sha256Many(keys)
    .map((h) => Buffer.from(h.buffer, h.byteOffset, h.byteLength));
}

/** Leaf hash of each (key hash, value), in one batched hash call. */
export function leafHashes(keyHashList: readonly Uint8Array[], values: readonly Uint8Array[]): Uint8Array[] {
  const n = keyHashList.length;
  if (n === 0) return [];
  let size = 0;
  for (const v of values) size += 33 + v.length;
  const buf = Buffer.allocUnsafe(size);
  const ends = new Uint32Array(n);
  let o = 0;
  for (let i = 0; i < n; i++) {
    const pre = leafPreimage(keyHashList[i], values[i]);
    o += pre.copy(buf, o);
    ends[i] = o;
  }
  const digests = crypto().sha256Segments(buf, ends);
  const out: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = digests.subarray(i * 32, i * 32 + 32);
  return out;
}

/**
 * The node hash of entries lo..hi-1 (ascending key hash, all sharing the first `depth` nibbles): null when
 * there are none, the leaf hash for one, else the branch hash at that depth.
 */
export function nodeHash(
  keyHashList: readonly Uint8Array[],
  leaves: readonly Uint8Array[],
  lo: number,
  hi: number,
  depth: number,
): Uint8Array | null {
  if (hi <= lo) return null;
  if (hi - lo === 1) return leaves[lo];
  return branchHash(keyHashList, leaves, lo, hi, depth);
}

function branchHash(
  keyHashList: readonly Uint8Array[],
  leaves: readonly Uint8Array[],
  lo: number,
  hi: number,
  depth: number,
): Uint8Array {
  let bitmap = 0;
  const children: Uint8Array[] = [];
  for (let i = lo; i < hi; ) {
    const nib = nibbleAt(keyHashList[i], depth);
    let j = i + 1;
    while (j < hi && nibbleAt(keyHashList[j], depth) === nib) j++;
    bitmap |= 1 << (15 - nib);
    children.push(nodeHash(keyHashList, leaves, i, j, depth + 1) as Uint8Array);
    i = j;
  }
  return crypto().sha256(branchPreimage(bitmap, children));
}

/** A subtree as the root computation sees it: its prefix (hex nibbles), entries and node hash. */
export interface SubtreeNode {
  prefix: string;
  entries: number;
  hash: Uint8Array;
}

/**
 * The trie root over subtrees that are sorted by prefix and prefix-free (verifyManifest checks both): the
 * levels above them rebuilt with the trie's rules (a prefix with one entry under it is that entry's leaf).
 */
export function rootFromSubtrees(subtrees: readonly SubtreeNode[]): Uint8Array {
  return (combine(subtrees, 0, subtrees.length, 0, true) as SubtreeNode).hash;
}

function combine(subs: readonly SubtreeNode[], lo: number, hi: number, depth: number, isRoot: boolean): SubtreeNode | null {
  if (!isRoot && hi - lo === 1 && subs[lo].prefix.length === depth) return subs[lo];
  let bitmap = 0;
  let entries = 0;
  let lone: SubtreeNode | null = null;
  const children: Uint8Array[] = [];
  for (let i = lo; i < hi; ) {
    const nibChar = subs[i].prefix[depth];
    let j = i + 1;
    while (j < hi && subs[j].prefix[depth] === nibChar) j++;
    const child = combine(subs, i, j, depth + 1, false);
    if (child !== null) {
      bitmap |= 1 << (15 - Number.parseInt(nibChar, 16));
      children.push(child.hash);
      entries += child.entries;
      lone = child;
    }
    i = j;
  }
  if (!isRoot && entries === 0) return null;
  if (!isRoot && entries === 1) return lone;
  return { prefix: subs[lo]?.prefix.slice(0, depth) ?? '', entries, hash: crypto().sha256(branchPreimage(bitmap, children)) };
}
