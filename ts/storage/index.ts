export { type KvBatch, type KvOp, type KvStore, StoreLockedError, addOps, openRocksStore } from './kv.js';
export * from './keys.js';
