/**
 * Which backend hashes and signs: the native addon when it loads, else the JS twin. Its own file so files of
 * this folder (verify-thread.ts) reach it without importing the folder's door.
 */
import { jsBackend } from './js.js';
import { loadNativeBackend } from './native.js';
import type { CryptoBackend } from './types.js';

let active: CryptoBackend | undefined;

/**
 * The one door to hashing and signatures. Picks the native addon when it loads, else the JS twin.
 * NATIVE_CRYPTO=js forces the twin (tests and benchmarks compare both).
 */
export function crypto(): CryptoBackend {
  if (!active) {
    const forced = process.env.NATIVE_CRYPTO;
    active = (forced !== 'js' && loadNativeBackend()) || jsBackend;
  }
  return active;
}

/** Native backend if the addon is built and loads here, else null (for tests and benches). */
export function nativeBackend(): CryptoBackend | null {
  return loadNativeBackend();
}

export const sha256 = (d: Uint8Array): Uint8Array => crypto().sha256(d);
export const keccak256 = (d: Uint8Array): Uint8Array => crypto().keccak256(d);
