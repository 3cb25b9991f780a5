import { crypto } from '../crypto/index.js';
import { type NativeAddon, type NativeTrieHandle, loadNativeAddon } from '../crypto/native.js';
import { type AuthenticatedTrie, MerkleTrie, type ProofStep, type StateProof } from './trie.js';

/**
 * The state trie with its shape and branch hashing in the native addon (same roots and proofs as
 * MerkleTrie, the JS twin). Values stay here; changes are only recorded by set/delete and applied in
 * one batch when a root or proof is asked for: key hashes and leaf hashes are computed in two native
 * calls over contiguous buffers, then one call updates the trie.
 */
export class NativeTrie implements AuthenticatedTrie {
  private readonly values = new Map<string, Buffer>();
  /** Keys changed since the last flush with their new value (undefined: deleted), so flush never reads the big map. */
  private pending = new Map<string, Buffer | undefined>();
  private readonly handle: NativeTrieHandle;

  constructor(private readonly addon: NativeAddon) {
    this.handle = addon.trieNew();
  }

  get size(): number {
    return this.values.size;
  }

  get(key: string): Buffer | undefined {
    return this.values.get(key);
  }

  entries(): IterableIterator<[string, Buffer]> {
    return this.values.entries();
  }

  set(keyString: string, value: Buffer): void {
    this.values.set(keyString, value);
    this.pending.set(keyString, value);
  }

  delete(keyString: string): boolean {
    if (!this.values.delete(keyString)) return false;
    this.pending.set(keyString, undefined);
    return true;
  }

  private flush(): void {
    const n = this.pending.size;
    if (n === 0) return;
    const keys = [...this.pending.keys()];
    const vals = [...this.pending.values()];
    this.pending = new Map();
    const c = crypto();
    let keyBytes = 0;
    for (const k of keys) keyBytes += k.length;
    const keyBuf = Buffer.allocUnsafe(keyBytes);
    const keyEnds = new Uint32Array(n);
    let o = 0;
    for (let i = 0; i < n; i++) keyEnds[i] = o += keyBuf.write(keys[i], o, 'latin1');
    const keyHashes = asBuffer(c.sha256Segments(keyBuf, keyEnds));
    const deletes = new Uint8Array(n);
    let leafBytes = 0;
    for (let i = 0; i < n; i++) {
      const v = vals[i];
      if (v === undefined) deletes[i] = 1;
      else leafBytes += 33 + v.length;
    }
    // Leaf preimages (0x00 || keyHash || value) for the keys still present; deleted keys get a zero hash.
    const pre = Buffer.allocUnsafe(leafBytes);
    const preEnds = new Uint32Array(n - deletes.reduce((a, d) => a + d, 0));
    const present: number[] = [];
    o = 0;
    for (let i = 0; i < n; i++) {
      if (deletes[i]) continue;
      const v = vals[i] as Buffer;
      pre[o] = 0;
      // Buffer.copy: no view object per key (a million of them on a restart).
      keyHashes.copy(pre, o + 1, i * 32, i * 32 + 32);
      v.copy(pre, o + 33);
      o += 33 + v.length;
      preEnds[present.length] = o;
      present.push(i);
    }
    const presentHashes = asBuffer(c.sha256Segments(pre, preEnds));
    const leafHashes = Buffer.alloc(n * 32);
    present.forEach((i, j) => presentHashes.copy(leafHashes, i * 32, j * 32, j * 32 + 32));
    this.addon.trieApply(this.handle, keyHashes, leafHashes, deletes);
  }

  rootHash(): Buffer {
    this.flush();
    return Buffer.from(this.addon.trieRoot(this.handle));
  }

  prove(key: Buffer): StateProof | null {
    this.flush();
    const value = this.values.get(key.toString('latin1'));
    if (!value) return null;
    const raw = this.addon.trieProve(this.handle, crypto().sha256(key));
    if (!raw) return null;
    const steps: ProofStep[] = [];
    const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let o = 0; o < b.length; ) {
      const bitmap = b.readUInt16BE(o);
      const index = b[o + 2];
      const count = b[o + 3];
      o += 4;
      const siblings: string[] = [];
      for (let i = 0; i < count; i++, o += 32) siblings.push(b.toString('hex', o, o + 32));
      steps.push({ bitmap, index, siblings });
    }
    return { key: key.toString('hex'), value: value.toString('hex'), steps };
  }
}

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/**
 * The trie implementation for a new state: native when the addon is loaded, else the JS twin.
 * NATIVE_TRIE=js forces the twin (tests compare both).
 */
export function createTrie(): AuthenticatedTrie {
  const addon = process.env.NATIVE_TRIE === 'js' || crypto().name !== 'native' ? null : loadNativeAddon();
  return addon && typeof addon.trieNew === 'function' ? new NativeTrie(addon) : new MerkleTrie();
}
