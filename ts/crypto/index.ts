/** The one door to hashing and signatures (docs/architecture.md). */
export type { CryptoBackend } from './types.js';
export { jsBackend } from './js.js';
export { crypto, keccak256, nativeBackend, sha256 } from './backend.js';
export { type NativeAddon, type NativeTrieHandle, loadNativeAddon } from './native.js';
export { SignatureBatch, verifyOffThread } from './verify-thread.js';
