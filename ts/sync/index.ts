export { BlockSync, type SyncLog } from './block-sync.js';
export { admitGossipedTransaction } from './tx-relay.js';
export { RangeFetcher } from './range-fetcher.js';
