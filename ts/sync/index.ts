export { BlockSync, type SyncLog } from './block-sync.js';
export { admitGossipedTransaction } from './tx-relay.js';
export { RangeFetcher } from './range-fetcher.js';
export {
  BAD_CHUNK_PENALTY,
  type SnapshotFetchOptions,
  type SnapshotFetchProgress,
  SnapshotPeersExhaustedError,
  fetchSnapshotChunks,
} from './snapshot-fetch.js';
export {
  MIN_SNAPSHOT_PEERS,
  type SnapshotCandidate,
  type StateSyncTrust,
  chooseSnapshot,
  parseStateSyncTrust,
  trustedBlockOnly,
} from './snapshot-choice.js';
export {
  type RefusedSnapshot,
  type StateSyncNetwork,
  type StateSyncOptions,
  type StateSyncStatus,
  initialStateSyncStatus,
  joinByStateSync,
} from './state-sync-join.js';
export {
  type SnapshotBlockVerdict,
  type TrustedSets,
  trustHint,
  checkSnapshotBlock,
  finalityProblem,
  genesisTrustedSets,
  snapshotCertificates,
} from './snapshot-trust.js';
