export { type KvBatch, type KvOp, type KvStore, StoreClosedError, StoreLockedError, addOps, openRocksStore } from './kv.js';
export * from './keys.js';
