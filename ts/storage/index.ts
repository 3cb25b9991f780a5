export { type KvOp, type KvStore, openRocksStore } from './kv.js';
export * from './keys.js';
