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
interface Leaf {
  kind: 0;
  keyHash: Buffer;
  key: Buffer;
  value: Buffer;
  hash: Buffer | null;
}
interface Branch {
  kind: 1;
  children: (Node | undefined)[];
  hash: Buffer | null;
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

const nibble = (h: Buffer, depth: number): number => (depth & 1 ? h[depth >> 1] & 15 : h[depth >> 1] >> 4);
const newBranch = (): Branch => ({ kind: 1, children: new Array(16), hash: null });

export function leafPreimage(keyHash: Uint8Array, value: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(33 + value.length);
  b[0] = 0;
  b.set(keyHash, 1);
  b.set(value, 33);
  return b;
}

export function branchPreimage(bitmap: number, childHashes: readonly Uint8Array[]): Buffer {
  const b = Buffer.allocUnsafe(3 + 32 * childHashes.length);
  b[0] = 1;
  b.writeUInt16BE(bitmap, 1);
  childHashes.forEach((h, i) => b.set(h, 3 + 32 * i));
  return b;
}

export class MerkleTrie {
  private root: Branch = newBranch();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Insert or replace. keyHash may be passed when the caller already has sha256(key). */
  set(key: Buffer, value: Buffer, keyHash: Buffer = Buffer.from(crypto().sha256(key))): void {
    let node = this.root;
    let depth = 0;
    for (;;) {
      node.hash = null;
      const nib = nibble(keyHash, depth);
      const child = node.children[nib];
      if (child === undefined) {
        node.children[nib] = { kind: 0, keyHash, key, value, hash: null };
        this.count++;
        return;
      }
      if (child.kind === 1) {
        node = child;
        depth++;
        continue;
      }
      if (child.keyHash.equals(keyHash)) {
        child.value = value;
        child.hash = null;
        return;
      }
      // Two leaves share this prefix: push the existing one one level down and retry there.
      const split = newBranch();
      split.children[nibble(child.keyHash, depth + 1)] = child;
      node.children[nib] = split;
      node = split;
      depth++;
    }
  }

  delete(key: Buffer, keyHash: Buffer = Buffer.from(crypto().sha256(key))): boolean {
    const path: { branch: Branch; nib: number }[] = [];
    let node: Branch = this.root;
    let depth = 0;
    for (;;) {
      const nib = nibble(keyHash, depth);
      const child = node.children[nib];
      if (child === undefined) return false;
      path.push({ branch: node, nib });
      if (child.kind === 1) {
        node = child;
        depth++;
        continue;
      }
      if (!child.keyHash.equals(keyHash)) return false;
      break;
    }
    for (const p of path) p.branch.hash = null;
    const last = path[path.length - 1];
    last.branch.children[last.nib] = undefined;
    this.count--;
    // Collapse upward so the shape stays canonical: a branch left with a single leaf (and no
    // sub-branch) is replaced by that leaf; an empty branch disappears. The root never collapses.
    for (let i = path.length - 1; i > 0; i--) {
      const { branch } = path[i];
      let only: Node | undefined;
      let n = 0;
      for (const c of branch.children) {
        if (c !== undefined) {
          n++;
          only = c;
        }
      }
      const parent = path[i - 1];
      if (n === 0) parent.branch.children[parent.nib] = undefined;
      else if (n === 1 && only?.kind === 0) parent.branch.children[parent.nib] = only;
      else break;
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
      for (const c of b.children) {
        if (c === undefined || c.hash !== null) continue;
        if (c.kind === 0) leaves.push(c);
        else visit(c, depth + 1);
      }
    };
    visit(this.root, 0);
    const c = crypto();
    if (leaves.length > 0) {
      const hashes = c.sha256Many(leaves.map((l) => leafPreimage(l.keyHash, l.value)));
      leaves.forEach((l, i) => {
        l.hash = Buffer.from(hashes[i].buffer, hashes[i].byteOffset, 32);
      });
    }
    for (let d = byDepth.length - 1; d >= 0; d--) {
      const level = byDepth[d];
      const pre = level.map((b) => {
        let bitmap = 0;
        const hs: Buffer[] = [];
        b.children.forEach((ch, i) => {
          if (ch !== undefined) {
            bitmap |= 1 << (15 - i);
            hs.push(ch.hash as Buffer);
          }
        });
        return branchPreimage(bitmap, hs);
      });
      const hashes = c.sha256Many(pre);
      level.forEach((b, i) => {
        b.hash = Buffer.from(hashes[i].buffer, hashes[i].byteOffset, 32);
      });
    }
    return this.root.hash as unknown as Buffer;
  }

  /** Membership proof for key against rootHash(); null when the key is absent. */
  prove(key: Buffer): StateProof | null {
    this.rootHash();
    const keyHash = Buffer.from(crypto().sha256(key));
    const steps: ProofStep[] = [];
    let node: Branch = this.root;
    let depth = 0;
    for (;;) {
      const nib = nibble(keyHash, depth);
      let bitmap = 0;
      const siblings: string[] = [];
      node.children.forEach((ch, i) => {
        if (ch === undefined) return;
        bitmap |= 1 << (15 - i);
        if (i !== nib) siblings.push((ch.hash as Buffer).toString('hex'));
      });
      const child = node.children[nib];
      if (child === undefined) return null;
      steps.push({ bitmap, index: nib, siblings });
      if (child.kind === 1) {
        node = child;
        depth++;
        continue;
      }
      if (!child.keyHash.equals(keyHash)) return null;
      return { key: key.toString('hex'), value: child.value.toString('hex'), steps };
    }
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
