import { crypto, type NativeAddon, type NativeTrieHandle, loadNativeAddon } from '../crypto/index.js';
import { type AuthenticatedTrie, MerkleTrie, type ProofStep, type StateProof } from './trie.js';

/**
 * The state trie with its shape and hashing in the native addon (same roots and proofs as MerkleTrie,
 * the JS twin). It holds no values (the state store does: state-store.ts): changes are only logged by
 * set/delete and applied in one native call when a root or proof is asked for, or when the log grows
 * long; the raw keys and values go over in two contiguous buffers, and the addon hashes keys and leaves
 * (in parallel) and updates the trie, which keeps key hashes and leaf hashes only.
 */
export class NativeTrie implements AuthenticatedTrie {
  /**
   * Keys changed since the last flush, in order, with their new value (undefined: deleted). Applied in
   * order, a key changed twice ends with its last value.
   */
  private pendingKeys: string[] = [];
  private pendingValues: (Buffer | undefined)[] = [];
  private readonly handle: NativeTrieHandle;
  /** True while a checkpoint of this trie is being written. */
  private saving = false;

  /** A new empty trie, or (handle given) one read back by loadCheckpoint. */
  constructor(
    private readonly addon: NativeAddon,
    handle?: NativeTrieHandle,
  ) {
    this.handle = handle ?? addon.trieNew();
  }

  get size(): number {
    this.flush();
    return this.addon.trieSize(this.handle);
  }

  set(keyString: string, value: Buffer): void {
    this.pendingKeys.push(keyString);
    this.pendingValues.push(value);
    if (this.pendingKeys.length >= FLUSH_AT) this.flush();
  }

  delete(keyString: string): void {
    this.pendingKeys.push(keyString);
    this.pendingValues.push(undefined);
    if (this.pendingKeys.length >= FLUSH_AT) this.flush();
  }

  /** Insert entries given as raw key bytes, in one native call (the start-up rebuild streams the state through this). */
  loadBatch(keys: readonly Buffer[], values: readonly Buffer[]): void {
    this.flush();
    let keyBytes = 0;
    for (const k of keys) keyBytes += k.length;
    this.send(
      keys.length,
      keyBytes,
      (i, buf, at) => keys[i].copy(buf, at),
      (i) => values[i],
    );
  }

  private flush(): void {
    const keys = this.pendingKeys;
    const vals = this.pendingValues;
    if (keys.length === 0) return;
    this.pendingKeys = [];
    this.pendingValues = [];
    let keyBytes = 0;
    for (const k of keys) keyBytes += k.length;
    this.send(
      keys.length,
      keyBytes,
      (i, buf, at) => buf.write(keys[i], at, 'latin1'),
      (i) => vals[i],
    );
  }

  /** Hand n changes to the addon: key i written by writeKey, its value (undefined: deleted). */
  private send(
    n: number,
    keyBytes: number,
    writeKey: (i: number, buf: Buffer, at: number) => number,
    valueAt: (i: number) => Buffer | undefined,
  ): void {
    if (n === 0) return;
    let valueBytes = 0;
    for (let i = 0; i < n; i++) valueBytes += valueAt(i)?.length ?? 0;
    const keyBuf = Buffer.allocUnsafe(keyBytes);
    const valueBuf = Buffer.allocUnsafe(valueBytes);
    const keyEnds = new Uint32Array(n);
    const valueEnds = new Uint32Array(n);
    const deletes = new Uint8Array(n);
    let ko = 0;
    let vo = 0;
    for (let i = 0; i < n; i++) {
      keyEnds[i] = ko += writeKey(i, keyBuf, ko);
      const v = valueAt(i);
      // Buffer.copy: no view object per key (a million of them on a restart).
      if (v === undefined) deletes[i] = 1;
      else vo += v.copy(valueBuf, vo);
      valueEnds[i] = vo;
    }
    this.addon.trieUpdate(this.handle, keyBuf, bytesOf(keyEnds), valueBuf, bytesOf(valueEnds), deletes);
  }

  /**
   * Writes the trie's shape and hashes, as they are now (pending changes included), with `meta` to `path`
   * atomically (`path`.tmp, fsync, rename, fsync of the directory) and a SHA-256 checksum. The snapshot is
   * taken before this returns; the file is written on a worker thread while the trie stays usable (records
   * changed meanwhile are copied for the writer first: native/src/checkpoint.rs). One save at a time per trie.
   */
  saveCheckpoint(path: string, meta: Buffer): Promise<void> {
    const save = this.addon.trieSave;
    if (typeof save !== 'function')
      return Promise.reject(new CheckpointError('CHECKPOINT_UNSUPPORTED', 'the native addon predates trie checkpoints'));
    if (this.saving)
      return Promise.reject(new CheckpointError('CHECKPOINT_BUSY', 'a checkpoint of this trie is already being written'));
    this.flush();
    let written: Promise<void>;
    try {
      written = save.call(this.addon, this.handle, Buffer.from(path), meta);
    } catch (e) {
      return Promise.reject(new CheckpointError('CHECKPOINT_BUSY', (e as Error).message));
    }
    this.saving = true;
    return written.then(
      () => {
        this.saving = false;
      },
      (e: Error) => {
        this.saving = false;
        throw new CheckpointError('CHECKPOINT_WRITE', e.message);
      },
    );
  }

  /**
   * The trie saved at `path` and its meta, or null when there is none to use (missing, truncated, checksum or
   * version mismatch, or no native checkpoints: NATIVE_TRIE=js, an old addon); `onInvalid` hears why. The
   * caller then rebuilds. The loaded trie holds shape and hashes, as every native trie does (no values).
   */
  static loadCheckpoint(path: string, onInvalid?: (reason: string) => void): { trie: NativeTrie; meta: Buffer } | null {
    const addon = checkpointAddon();
    const load = addon?.trieLoad;
    if (!addon || !load) {
      onInvalid?.('trie checkpoints need the native addon');
      return null;
    }
    const got = load.call(addon, Buffer.from(path));
    if (typeof got === 'string') {
      onInvalid?.(got);
      return null;
    }
    return {
      trie: new NativeTrie(addon, got.handle),
      meta: Buffer.from(got.meta.buffer, got.meta.byteOffset, got.meta.byteLength),
    };
  }

  rootHash(): Buffer {
    this.flush();
    return Buffer.from(this.addon.trieRoot(this.handle));
  }

  prove(key: Buffer, value: Buffer): StateProof | null {
    this.flush();
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

/** Changes logged before they are handed to the addon without a root being asked (bounds the log's memory). */
const FLUSH_AT = 65_536;

/**
 * Why a checkpoint was not written: the addon has no checkpoints (UNSUPPORTED: rebuild on restart instead),
 * a save of this trie is still running (BUSY: skip this one), or the file could not be written (WRITE: the
 * previous checkpoint file, if any, is untouched).
 */
export class CheckpointError extends Error {
  constructor(
    readonly code: 'CHECKPOINT_UNSUPPORTED' | 'CHECKPOINT_BUSY' | 'CHECKPOINT_WRITE',
    message: string,
  ) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/** The addon when it can read and write trie checkpoints (NATIVE_TRIE=js or an old build: null). */
function checkpointAddon(): NativeAddon | null {
  if (process.env.NATIVE_TRIE === 'js' || crypto().name !== 'native') return null;
  const addon = loadNativeAddon();
  return addon && typeof addon.trieSave === 'function' && typeof addon.trieLoad === 'function' ? addon : null;
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
