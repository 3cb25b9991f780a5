import { crypto } from '../crypto/index.js';

/**
 * Authenticated map from state keys to values: a 16-ary radix trie over sha256(key) where each
 * leaf sits at the shortest prefix that is unique to it (Jellyfish-style), so the shape depends
 * only on the key set, never on insertion order. Updating k keys re-hashes only their paths:
 * O(k log16 N), hashed level by level in one batch call per level (native sha256Many when built).
 *
 *   leaf hash   = sha256(0x00 || sha256(key) || value)
 *   branch hash = sha256(0x01 || bitmap u16 BE || hashes of present children, in nibble order)
 */
/** Leaves hold no key bytes or key hash (the leaf map's string key has them), to keep GC work per leaf low. */
interface Leaf {
  kind: 0;
  key: string;
  value: Buffer;
  hash: Buffer | null;
  parent: Branch;
  /** Nibble under which the parent holds this node. */
  slot: number;
}
interface Branch {
  kind: 1;
  children: (Node | undefined)[];
  hash: Buffer | null;
  parent: Branch | null;
  slot: number;
}
type Node = Leaf | Branch;

export interface ProofStep {
  /** Bitmap of present children of the branch at this depth. */
  bitmap: number;
  /** Nibble taken at this depth (also derivable from the key hash). */
  index: number;
  /** Hashes of the other present children, in nibble order. */
  siblings: string[];
}

export interface StateProof {
  key: string;
  value: string;
  steps: ProofStep[];
}

const nibble = (h: Uint8Array, depth: number): number => (depth & 1 ? h[depth >> 1] & 15 : h[depth >> 1] >> 4);
const newBranch = (parent: Branch | null, slot: number): Branch => ({
  kind: 1,
  children: new Array(16),
  hash: null,
  parent,
  slot,
});

export function leafPreimage(keyHash: Uint8Array, value: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(33 + value.length);
  writeLeafPreimage(b, 0, keyHash, value);
  return b;
}

function writeLeafPreimage(b: Buffer, at: number, keyHash: Uint8Array, value: Uint8Array): number {
  b[at] = 0;
  b.set(keyHash, at + 1);
  b.set(value, at + 33);
  return at + 33 + value.length;
}

export function branchPreimage(bitmap: number, childHashes: readonly Uint8Array[]): Buffer {
  const b = Buffer.allocUnsafe(3 + 32 * childHashes.length);
  b[0] = 1;
  b.writeUInt16BE(bitmap, 1);
  childHashes.forEach((h, i) => b.set(h, 3 + 32 * i));
  return b;
}

/** Write a branch's preimage at `at` (children must be hashed); returns the end offset. */
function writeBranchPreimage(b: Buffer, at: number, node: Branch): number {
  let bitmap = 0;
  let o = at + 3;
  const ch = node.children;
  for (let i = 0; i < 16; i++) {
    const c = ch[i];
    if (c === undefined) continue;
    bitmap |= 1 << (15 - i);
    b.set(c.hash as Buffer, o);
    o += 32;
  }
  b[at] = 1;
  b[at + 1] = bitmap >> 8;
  b[at + 2] = bitmap & 0xff;
  return o;
}

const keyHashOf = (leaf: Leaf): Uint8Array => crypto().sha256(Buffer.from(leaf.key, 'latin1'));

/** sha256 of every leaf's key, back to back, in one native call. */
function hashKeys(leaves: Leaf[]): Uint8Array {
  let size = 0;
  for (const l of leaves) size += l.key.length;
  const buf = Buffer.allocUnsafe(size);
  const ends = new Uint32Array(leaves.length);
  let o = 0;
  for (let i = 0; i < leaves.length; i++) ends[i] = o += buf.write(leaves[i].key, o, 'latin1');
  return crypto().sha256Segments(buf, ends);
}

/** Mark node's ancestors dirty (stops at the first already-dirty one: its ancestors are dirty too). */
function dirtyUp(b: Branch | null): void {
  while (b !== null && b.hash !== null) {
    b.hash = null;
    b = b.parent;
  }
}

function place(parent: Branch, slot: number, node: Node): void {
  parent.children[slot] = node;
  node.parent = parent;
  node.slot = slot;
}

/**
 * What StateStore needs from an authenticated trie; MerkleTrie (JS) and NativeTrie (Rust) implement it.
 * The store owns the values (state-store.ts): the native trie keeps only key and leaf hashes, so a
 * proof is given the value the store holds for the key.
 */
export interface AuthenticatedTrie {
  readonly size: number;
  /** Keys are the state key bytes as latin1 strings (KeyStr). */
  set(key: string, value: Buffer): void;
  /** Remove a key (nothing happens when it is absent). */
  delete(key: string): void;
  /** Insert many entries given as raw key bytes (start-up rebuild: no string per key). */
  loadBatch?(keys: readonly Buffer[], values: readonly Buffer[]): void;
  rootHash(): Buffer;
  /** Membership proof of key, whose value is `value`; null when the key is absent. */
  prove(key: Buffer, value: Buffer): StateProof | null;
}

export class MerkleTrie implements AuthenticatedTrie {
  private readonly root: Branch = newBranch(null, 0);
  /** Leaves by key (latin1 string of the key bytes): O(1) reads and updates without a descent. */
  private readonly leaves = new Map<string, Leaf>();

  get size(): number {
    return this.leaves.size;
  }

  get(key: string): Buffer | undefined {
    return this.leaves.get(key)?.value;
  }

  *entries(): IterableIterator<[string, Buffer]> {
    for (const [k, l] of this.leaves) yield [k, l.value];
  }

  /** Insert or replace; key is the key bytes as a latin1 string. */
  set(keyString: string, value: Buffer): void {
    const existing = this.leaves.get(keyString);
    if (existing) {
      existing.value = value;
      if (existing.hash !== null) {
        existing.hash = null;
        dirtyUp(existing.parent);
      }
      return;
    }
    const kh = Buffer.from(crypto().sha256(Buffer.from(keyString, 'latin1')));
    let node = this.root;
    let depth = 0;
    dirtyUp(node);
    for (;;) {
      node.hash = null;
      const nib = nibble(kh, depth);
      const child = node.children[nib];
      if (child === undefined) {
        const leaf: Leaf = { kind: 0, key: keyString, value, hash: null, parent: node, slot: nib };
        node.children[nib] = leaf;
        this.leaves.set(keyString, leaf);
        return;
      }
      if (child.kind === 1) {
        node = child;
        depth++;
        continue;
      }
      // Two leaves share this prefix: push the existing one one level down and retry there.
      const split = newBranch(node, nib);
      place(split, nibble(keyHashOf(child), depth + 1), child);
      node.children[nib] = split;
      node = split;
      depth++;
    }
  }

  delete(keyString: string): boolean {
    const leaf = this.leaves.get(keyString);
    if (!leaf) return false;
    this.leaves.delete(keyString);
    let branch = leaf.parent;
    branch.children[leaf.slot] = undefined;
    dirtyUp(branch);
    branch.hash = null;
    // Collapse upward so the shape stays canonical: a branch left with a single leaf (and no
    // sub-branch) is replaced by that leaf; an empty branch disappears. The root never collapses.
    while (branch.parent !== null) {
      let only: Node | undefined;
      let n = 0;
      for (const c of branch.children) {
        if (c !== undefined) {
          n++;
          only = c;
        }
      }
      const parent: Branch = branch.parent;
      if (n === 0) parent.children[branch.slot] = undefined;
      else if (n === 1 && only?.kind === 0) place(parent, branch.slot, only);
      else break;
      branch = parent;
    }
    return true;
  }

  /** Root hash; re-hashes only dirty paths, one batched hash call per trie level. */
  rootHash(): Buffer {
    if (this.root.hash) return this.root.hash;
    const byDepth: Branch[][] = [];
    const leaves: Leaf[] = [];
    const visit = (b: Branch, depth: number): void => {
      (byDepth[depth] ??= []).push(b);
      const ch = b.children;
      for (let i = 0; i < 16; i++) {
        const c = ch[i];
        if (c === undefined || c.hash !== null) continue;
        if (c.kind === 0) leaves.push(c);
        else visit(c, depth + 1);
      }
    };
    visit(this.root, 0);
    const c = crypto();
    if (leaves.length > 0) {
      let size = 0;
      for (const l of leaves) size += 33 + l.value.length;
      const buf = Buffer.allocUnsafe(size);
      const ends = new Uint32Array(leaves.length);
      let o = 0;
      const keyHashes = hashKeys(leaves);
      for (let i = 0; i < leaves.length; i++) {
        ends[i] = o = writeLeafPreimage(buf, o, keyHashes.subarray(i * 32, i * 32 + 32), leaves[i].value);
      }
      this.assign(leaves, c.sha256Segments(buf, ends));
    }
    for (let d = byDepth.length - 1; d >= 0; d--) {
      const level = byDepth[d];
      const buf = Buffer.allocUnsafe(level.length * (3 + 16 * 32));
      const ends = new Uint32Array(level.length);
      let o = 0;
      for (let i = 0; i < level.length; i++) ends[i] = o = writeBranchPreimage(buf, o, level[i]);
      this.assign(level, c.sha256Segments(buf, ends));
    }
    return this.root.hash as unknown as Buffer;
  }

  /** Give each node a 32-byte view of its digest (all digests of a level share one buffer). */
  private assign(nodes: Node[], digests: Uint8Array): void {
    for (let i = 0; i < nodes.length; i++) nodes[i].hash = Buffer.from(digests.buffer, digests.byteOffset + i * 32, 32);
  }

  /** Membership proof for key against rootHash(); null when the key is absent. */
  prove(key: Buffer): StateProof | null {
    this.rootHash();
    const leaf = this.leaves.get(key.toString('latin1'));
    if (!leaf) return null;
    const steps: ProofStep[] = [];
    let node: Node = leaf;
    while (node.parent !== null) {
      const parent: Branch = node.parent;
      let bitmap = 0;
      const siblings: string[] = [];
      parent.children.forEach((ch, i) => {
        if (ch === undefined) return;
        bitmap |= 1 << (15 - i);
        if (i !== node.slot) siblings.push((ch.hash as Buffer).toString('hex'));
      });
      steps.unshift({ bitmap, index: node.slot, siblings });
      node = parent;
    }
    return { key: key.toString('hex'), value: leaf.value.toString('hex'), steps };
  }
}

/**
 * Check a membership proof offline: recompute the leaf, then every branch up to the root, checking
 * that each step's nibble is the one the key's hash dictates. Uses only sha256.
 */
export function verifyStateProof(proof: StateProof, rootHex: string, sha256: (d: Uint8Array) => Uint8Array): boolean {
  try {
    const key = Buffer.from(proof.key, 'hex');
    const keyHash = sha256(key);
    let h = sha256(leafPreimage(keyHash, Buffer.from(proof.value, 'hex')));
    for (let d = proof.steps.length - 1; d >= 0; d--) {
      const s = proof.steps[d];
      if (s.index !== nibble(Buffer.from(keyHash), d) || (s.bitmap & (1 << (15 - s.index))) === 0) return false;
      const hashes: Uint8Array[] = [];
      let sib = 0;
      for (let i = 0; i < 16; i++) {
        if ((s.bitmap & (1 << (15 - i))) === 0) continue;
        if (i === s.index) hashes.push(h);
        else {
          const hex = s.siblings[sib++];
          if (hex?.length !== 64) return false;
          hashes.push(Buffer.from(hex, 'hex'));
        }
      }
      if (sib !== s.siblings.length) return false;
      h = sha256(branchPreimage(s.bitmap, hashes));
    }
    return Buffer.from(h).toString('hex') === rootHex.replace(/^0x/, '').toLowerCase();
  } catch {
    return false;
  }
}
