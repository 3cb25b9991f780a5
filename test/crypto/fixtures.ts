/** Shared helpers for the crypto tests: deterministic keys/signatures and backend selection. */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { ExecutionContext } from 'ava';
import { jsBackend } from '../../ts/crypto/js.js';
import { loadNativeBackend, nativeLoadError } from '../../ts/crypto/native.js';
import type { CryptoBackend } from '../../ts/crypto/types.js';

export const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export const hex = (b: Uint8Array | null): string | null => (b ? Buffer.from(b).toString('hex') : null);
export const fromHex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));
export const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

/** Deterministic pseudo-random bytes (keccak chain), so failures reproduce. */
export function bytes(seed: string, len: number): Uint8Array {
  const out = new Uint8Array(len);
  let h = keccak_256(utf8(seed));
  for (let off = 0; off < len; off += 32) {
    out.set(h.subarray(0, Math.min(32, len - off)), off);
    h = keccak_256(h);
  }
  return out;
}

const toBig = (b: Uint8Array): bigint => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const to32 = (n: bigint): Uint8Array => fromHex(n.toString(16).padStart(64, '0'));

/** Same r, s' = n - s: the high-S twin of a low-S signature (recovery id flips parity). */
export function flipS(sig64: Uint8Array): Uint8Array {
  const out = new Uint8Array(64);
  out.set(sig64.subarray(0, 32), 0);
  out.set(to32(N - toBig(sig64.subarray(32))), 32);
  return out;
}

export function compactSig(r: bigint, s: bigint): Uint8Array {
  const out = new Uint8Array(64);
  out.set(to32(r), 0);
  out.set(to32(s), 32);
  return out;
}

export interface Signed {
  sig: Uint8Array;
  digest: Uint8Array;
  pubkey: Uint8Array;
  recid: number;
}

/** n signatures made with @noble/curves (prehash: false, low-S), deterministic per seed. */
export function makeSigned(n: number, seed = 'sig'): Signed[] {
  const out: Signed[] = [];
  for (let i = 0; i < n; i++) {
    const priv = bytes(`${seed}-priv-${i % 17}`, 32); // a few keys, many messages
    const digest = bytes(`${seed}-msg-${i}`, 32);
    const rec = secp256k1.sign(digest, priv, { prehash: false, format: 'recovered' });
    out.push({ sig: rec.slice(1), digest, pubkey: secp256k1.getPublicKey(priv, false), recid: rec[0] });
  }
  return out;
}

export const flip = (b: Uint8Array, i: number, mask = 1): Uint8Array => {
  const c = b.slice();
  c[i] ^= mask;
  return c;
};

/**
 * The native backend, or null after recording why. Without the addon this passes with a log note,
 * unless NATIVE_REQUIRE=1 (CI after build:native), where it fails.
 */
export function nativeOrSkip(t: ExecutionContext): CryptoBackend | null {
  const native = loadNativeBackend();
  if (native) return native;
  const why = nativeLoadError() ?? 'unknown';
  if (process.env.NATIVE_REQUIRE === '1') {
    t.fail(`NATIVE_REQUIRE=1 but the native addon did not load: ${why}`);
  } else {
    t.log(`native addon not available (${why}); native check skipped`);
    t.pass();
  }
  return null;
}

/** The backends to run shared vectors through: always JS, plus native when it loads. */
export function backends(): CryptoBackend[] {
  const native = loadNativeBackend();
  return native ? [jsBackend, native] : [jsBackend];
}

/** Fails under NATIVE_REQUIRE=1 when only the JS twin is present (shared-vector tests call this). */
export function noteBackends(t: ExecutionContext): CryptoBackend[] {
  const list = backends();
  if (list.length === 1) {
    if (process.env.NATIVE_REQUIRE === '1') t.fail(`NATIVE_REQUIRE=1 but native did not load: ${nativeLoadError()}`);
    else t.log('native addon not available: vectors checked on the JS twin only');
  }
  return list;
}
