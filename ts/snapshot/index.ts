/**
 * The door of ts/snapshot/: state snapshots for state sync (docs/p2p.md, "State sync") — the format, taking them
 * every N finalized blocks, verifying a manifest and each chunk on its own, restoring a state from chunks.
 */
export {
  CHUNK_MAX_BYTES,
  type ChunkEntry,
  type ChunkRef,
  MANIFEST_MAX_BYTES,
  SNAPSHOT_FORMAT,
  type SnapshotManifest,
  type SubtreeRef,
  decodeChunk,
  decodeManifest,
  encodeManifest,
  manifestId,
} from './format.js';
export { ForgedManifestRootError, SnapshotChunkError, SnapshotManifestError } from './errors.js';
export { verifyChunk, verifyManifest } from './verify.js';
export { type CutLimits, DEFAULT_CUT_LIMITS, type SnapshotBlock, SnapshotAbort, startSnapshot } from './take.js';
export { SNAPSHOTS_DIR, SnapshotDirectory } from './store.js';
export { snapshotSource } from './serve.js';
export { RESTORE_PROGRESS_KEY, RestoreRefusedError, SnapshotRestorer } from './restore.js';
export { DEFAULT_SNAPSHOT_INTERVAL, DEFAULT_SNAPSHOT_KEEP, SnapshotSchedule, type SnapshotScheduleOptions } from './schedule.js';
export { rootFromSubtrees } from './subtree-hash.js';
