import { crypto } from '../crypto/index.js';
import { type NativeAddon, type NativeTrieHandle, loadNativeAddon } from '../crypto/native.js';
import { type AuthenticatedTrie, MerkleTrie, type ProofStep, type StateProof } from './trie.js';

/**
 * The state trie with its shape and hashing in the native addon (same roots and proofs as MerkleTrie,
 * the JS twin). Values stay here; changes are only logged by set/delete and applied in one native call
 * when a root or proof is asked for: the raw keys and values go over in two contiguous buffers, and the
 * addon hashes keys and leaves (in parallel) and updates the trie.
 */
export class NativeTrie implements AuthenticatedTrie {
  private readonly values = new Map<string, Buffer>();
  /**
   * Keys changed since the last flush, in order, with their new value (undefined: deleted). Applied in
   * order, a key changed twice ends with its last value; flush never reads the big map.
   */
  private pendingKeys: string[] = [];
  private pendingValues: (Buffer | undefined)[] = [];
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
    this.pendingKeys.push(keyString);
    this.pendingValues.push(value);
  }

  delete(keyString: string): boolean {
    if (!this.values.delete(keyString)) return false;
    this.pendingKeys.push(keyString);
    this.pendingValues.push(undefined);
    return true;
  }

  private flush(): void {
    const keys = this.pendingKeys;
    const vals = this.pendingValues;
    const n = keys.length;
    if (n === 0) return;
    this.pendingKeys = [];
    this.pendingValues = [];
    let keyBytes = 0;
    let valueBytes = 0;
    for (let i = 0; i < n; i++) {
      keyBytes += keys[i].length;
      valueBytes += vals[i]?.length ?? 0;
    }
    const keyBuf = Buffer.allocUnsafe(keyBytes);
    const valueBuf = Buffer.allocUnsafe(valueBytes);
    const keyEnds = new Uint32Array(n);
    const valueEnds = new Uint32Array(n);
    const deletes = new Uint8Array(n);
    let ko = 0;
    let vo = 0;
    for (let i = 0; i < n; i++) {
      keyEnds[i] = ko += keyBuf.write(keys[i], ko, 'latin1');
      const v = vals[i];
      // Buffer.copy: no view object per key (a million of them on a restart).
      if (v === undefined) deletes[i] = 1;
      else vo += v.copy(valueBuf, vo);
      valueEnds[i] = vo;
    }
    this.addon.trieUpdate(this.handle, keyBuf, bytesOf(keyEnds), valueBuf, bytesOf(valueEnds), deletes);
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

const bytesOf = (u: Uint32Array): Uint8Array => new Uint8Array(u.buffer, u.byteOffset, u.byteLength);

/**
 * The trie implementation for a new state: native when the addon is loaded, else the JS twin.
 * NATIVE_TRIE=js forces the twin (tests compare both).
 */
export function createTrie(): AuthenticatedTrie {
  const addon = process.env.NATIVE_TRIE === 'js' || crypto().name !== 'native' ? null : loadNativeAddon();
  return addon && typeof addon.trieUpdate === 'function' ? new NativeTrie(addon) : new MerkleTrie();
}
