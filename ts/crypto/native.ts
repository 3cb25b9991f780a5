import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsSign } from './js.js';
import type { CryptoBackend } from './types.js';

/**
 * What the Rust addon (native/src/lib.rs) exports. Inputs are read in place; outputs are fresh
 * Uint8Arrays. The loader below adapts these to CryptoBackend.
 */
/** Opaque handle of a native state trie (see native/src/trie.rs). */
export type NativeTrieHandle = { readonly __nativeTrie: unique symbol };

export interface NativeAddon {
  readonly version: string;
  trieNew(): NativeTrieHandle;
  /**
   * Set or delete n state keys, in order: key i is keys[keyEnds[i-1]..keyEnds[i]], its value
   * values[valueEnds[i-1]..valueEnds[i]], deleted when deletes[i] is 1. Ends are the bytes of a Uint32Array.
   * Key and leaf hashes are computed natively.
   */
  trieUpdate(
    handle: NativeTrieHandle,
    keys: Uint8Array,
    keyEnds: Uint8Array,
    values: Uint8Array,
    valueEnds: Uint8Array,
    deletes: Uint8Array,
  ): void;
  trieRoot(handle: NativeTrieHandle): Uint8Array;
  /** Encoded proof steps, or null when the key is absent. */
  trieProve(handle: NativeTrieHandle, keyHash: Uint8Array): Uint8Array | null;
  trieSize(handle: NativeTrieHandle): number;
  /**
   * Takes a snapshot of the trie now and writes it to path (the UTF-8 bytes of the path) off the JS thread:
   * resolves once the file is durable, rejects with the I/O error (code CHECKPOINT_WRITE); throws at once
   * when a save of this trie is still running. Absent from addons built before checkpoints.
   */
  trieSave?(handle: NativeTrieHandle, path: Uint8Array, meta: Uint8Array): Promise<void>;
  /** A trie read back from a checkpoint, or why the file cannot be used (missing, truncated, checksum...). */
  trieLoad?(path: Uint8Array): { handle: NativeTrieHandle; meta: Uint8Array } | string;
  /** Size of the rayon pool used by the batch calls. */
  threads(): number;
  sha256(data: Uint8Array): Uint8Array;
  keccak256(data: Uint8Array): Uint8Array;
  /** Digest written to out[0..32] (out >= 32 bytes): no result allocation on the native side. */
  sha256Into(data: Uint8Array, out: Uint8Array): void;
  keccak256Into(data: Uint8Array, out: Uint8Array): void;
  /** All digests in one Uint8Array of items.length * 32 bytes. */
  sha256Many(items: readonly Uint8Array[]): Uint8Array;
  sha256Segments(data: Uint8Array, ends: Uint8Array): Uint8Array;
  verify(sig64: Uint8Array, digest32: Uint8Array, pubkey65: Uint8Array): boolean;
  /** One byte per signature: 1 valid, 0 not. */
  verifyBatch(sigs: readonly Uint8Array[], digests: readonly Uint8Array[], pubkeys: readonly Uint8Array[]): Uint8Array;
  recover(sig64: Uint8Array, recid: number, digest32: Uint8Array): Uint8Array | null;
  /** r || s || recid; throws on an invalid key. Absent from addons built before it (the JS twin signs then). */
  sign?(digest32: Uint8Array, privateKey32: Uint8Array, entropy32: Uint8Array | null): Uint8Array;
  merkleRoot(leaves: readonly Uint8Array[]): Uint8Array;
  /** Sets the bits in place; throws TypeError unless bloom is 256 bytes. */
  bloomAdd(bloom256: Uint8Array, item: Uint8Array): void;
  bloomTest(bloom256: Uint8Array, item: Uint8Array): boolean;
  /** blooms: one Uint8Array of n*256 bytes (fastest) or an array of 256-byte views. */
  bloomScan(blooms: Uint8Array | readonly Uint8Array[], groups: readonly (readonly Uint8Array[])[]): Uint32Array;
}

const BLOOM = 256;

let loaded: { addon: NativeAddon | null; backend: CryptoBackend | null; error: string | null } | undefined;

/** Repo root: this file runs from ts/crypto (tsx) or dist/ts/crypto (tsc). */
function candidateRoots(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  return [resolve(here, '../../..'), resolve(here, '../..')];
}

/** libc flavour for napi's linux file names (index.linux-x64-gnu.node / -musl). */
function linuxAbi(): 'gnu' | 'musl' {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? 'gnu' : 'musl';
}

/** Path of the built addon, or null. NATIVE_ADDON_PATH overrides the search. */
export function findAddonPath(): string | null {
  const forced = process.env.NATIVE_ADDON_PATH;
  if (forced) return existsSync(forced) ? forced : null;
  const prefix = `index.${process.platform}-${process.arch}`;
  for (const root of candidateRoots()) {
    const dir = join(root, 'native');
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.node'));
    } catch {
      continue;
    }
    const platformFiles = files.filter((f) => f.startsWith(`${prefix}.`) || f.startsWith(`${prefix}-`));
    if (platformFiles.length === 1) return join(dir, platformFiles[0]);
    if (platformFiles.length > 1) {
      const abi = process.platform === 'linux' ? linuxAbi() : '';
      const best = platformFiles.find((f) => abi !== '' && f.includes(`-${abi}`)) ?? platformFiles[0];
      return join(dir, best);
    }
    if (files.includes('index.node')) return join(dir, 'index.node');
  }
  return null;
}

function load(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  try {
    const path = findAddonPath();
    if (!path) {
      loaded = { addon: null, backend: null, error: 'addon not built (run npm run build:native)' };
    } else {
      const addon = createRequire(import.meta.url)(path) as NativeAddon;
      if (
        typeof addon?.verifyBatch !== 'function' ||
        typeof addon.bloomScan !== 'function' ||
        typeof addon.sha256Segments !== 'function'
      ) {
        throw new Error(`${path} does not export the expected functions`);
      }
      loaded = { addon, backend: adapt(addon), error: null };
    }
  } catch (e) {
    loaded = { addon: null, backend: null, error: e instanceof Error ? e.message : String(e) };
  }
  return loaded;
}

/** The native CryptoBackend, loaded once; null (never a throw) when the addon is missing or broken. */
export function loadNativeBackend(): CryptoBackend | null {
  return load().backend;
}

/** The raw addon (extra entry points such as bloomScan over one concatenated buffer), or null. */
export function loadNativeAddon(): NativeAddon | null {
  return load().addon;
}

/** Why the addon did not load (null when it did). For a startup log line. */
export function nativeLoadError(): string | null {
  return load().error;
}

/** When all blooms are consecutive 256-byte views of one ArrayBuffer, one view spanning them (no copy). */
function contiguous(blooms: readonly Uint8Array[]): Uint8Array | null {
  const first = blooms[0];
  if (!first) return null;
  const buf = first.buffer;
  let off = first.byteOffset;
  for (const b of blooms) {
    if (b.buffer !== buf || b.byteOffset !== off || b.byteLength !== BLOOM) return null;
    off += BLOOM;
  }
  return new Uint8Array(buf, first.byteOffset, blooms.length * BLOOM);
}

/**
 * bloomScan over separate (non-contiguous) blooms. Reading 10k array elements through N-API costs
 * more than the scan itself, so only the group items are hashed natively and the bit tests run here.
 */
function scanSeparate(
  keccak: (d: Uint8Array) => Uint8Array,
  blooms: readonly Uint8Array[],
  groups: readonly (readonly Uint8Array[])[],
): number[] {
  // Per group, per item: 3 x (byte index, mask), same rule as bloomBits in shared.ts.
  const bits = groups.map((g) => {
    const a = new Int32Array(g.length * 6);
    g.forEach((item, k) => {
      const h = keccak(item);
      for (let j = 0; j < 3; j++) {
        const bit = ((h[2 * j] << 8) | h[2 * j + 1]) & 2047;
        a[k * 6 + 2 * j] = 255 - (bit >> 3);
        a[k * 6 + 2 * j + 1] = 1 << (bit & 7);
      }
    });
    return a;
  });
  const out: number[] = [];
  outer: for (let i = 0; i < blooms.length; i++) {
    const b = blooms[i];
    if (b.length !== BLOOM) throw new TypeError('bloomScan: blooms must be 256-byte Uint8Arrays');
    for (const g of bits) {
      let any = false;
      for (let k = 0; k < g.length; k += 6) {
        if ((b[g[k]] & g[k + 1]) !== 0 && (b[g[k + 2]] & g[k + 3]) !== 0 && (b[g[k + 4]] & g[k + 5]) !== 0) {
          any = true;
          break;
        }
      }
      if (!any) continue outer;
    }
    out.push(i);
  }
  return out;
}

/** The addon's signing, or the JS twin's where an addon built before it has none (same bytes either way). */
function nativeSign(addon: NativeAddon): CryptoBackend['sign'] {
  const sign = addon.sign;
  if (typeof sign !== 'function') return jsSign;
  return (digest32, privateKey32, entropy32) => {
    if (digest32.length !== 32 || privateKey32.length !== 32 || (entropy32 !== undefined && entropy32.length !== 32))
      throw new TypeError('sign: expected a 32-byte digest and key (and 32 bytes of entropy)');
    return sign.call(addon, digest32, privateKey32, entropy32 ?? null);
  };
}

function adapt(addon: NativeAddon): CryptoBackend {
  // Digests land in this reused off-heap scratch and are sliced out: a small JS-side copy is about
  // twice as fast as allocating a fresh ArrayBuffer through N-API for every hash.
  const scratch = new Uint8Array(new ArrayBuffer(32));
  const sha256 = (d: Uint8Array): Uint8Array => {
    addon.sha256Into(d, scratch);
    return scratch.slice();
  };
  const keccak256 = (d: Uint8Array): Uint8Array => {
    addon.keccak256Into(d, scratch);
    return scratch.slice();
  };
  return {
    name: 'native',
    sha256,
    keccak256,
    // The 32-byte results are views into one shared ArrayBuffer (one allocation for the batch):
    // copy with .slice() before handing `.buffer` to anything that expects exactly 32 bytes.
    sha256Many: (items) => {
      const all = addon.sha256Many(items);
      const out = new Array<Uint8Array>(items.length);
      for (let i = 0; i < items.length; i++) out[i] = all.subarray(i * 32, i * 32 + 32);
      return out;
    },
    sha256Segments: (data, ends) => addon.sha256Segments(data, new Uint8Array(ends.buffer, ends.byteOffset, ends.byteLength)),
    verify: addon.verify,
    verifyBatch: (sigs, digests, pubkeys) => {
      const flags = addon.verifyBatch(sigs, digests, pubkeys);
      const out = new Array<boolean>(flags.length);
      for (let i = 0; i < flags.length; i++) out[i] = flags[i] === 1;
      return out;
    },
    recover: (sig64, recid, digest32) =>
      Number.isInteger(recid) && recid >= 0 && recid <= 3 ? addon.recover(sig64, recid, digest32) : null,
    sign: nativeSign(addon),
    merkleRoot: (leaves) => {
      // Same object semantics as merkleRootWith: one leaf is returned as is.
      if (leaves.length === 1) return leaves[0];
      return addon.merkleRoot(leaves);
    },
    bloomAdd: addon.bloomAdd,
    bloomTest: addon.bloomTest,
    bloomScan: (blooms, groups) => {
      if (blooms.length === 0) return [];
      const one = contiguous(blooms);
      return one ? Array.from(addon.bloomScan(one, groups)) : scanSeparate(keccak256, blooms, groups);
    },
  };
}
