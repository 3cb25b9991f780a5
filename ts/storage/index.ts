export { type KvOp, type KvStore, StoreLockedError, openRocksStore } from './kv.js';
export * from './keys.js';
