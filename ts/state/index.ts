/**
 * The door of ts/state/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export {
  NS,
  getAccount,
  putAccount,
  accountKey,
  codeKey,
  decodeAccount,
  encodeAccount,
  storageKey,
  accountKeyBytes,
  addressFromAccountKey,
  addressFromCodeKey,
} from './accounts.js';
export { id20, PairKeyCache, nsChar } from './key-ids.js';
export { NativeTrie, createTrie } from './native-trie.js';
export { StateSnapshot } from './snapshots.js';
export {
  StateOverlay,
  type KeyStr,
  type StateReader,
  keyStr,
  STREAM_CHUNK,
  StateStore,
  keyBytes,
  type StateUndo,
  type StateChanges,
  DEFAULT_STATE_CACHE_MB,
} from './state-store.js';
export { type AuthenticatedTrie, type StateProof, verifyStateProof, leafPreimage, branchPreimage } from './trie.js';
