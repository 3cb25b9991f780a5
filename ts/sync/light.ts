/**
 * The light door of ts/sync/: what the flag parser needs before the node loads (ts/node/config.ts reads
 * `--state-sync-trust`), from a file that imports nothing at run time. docs/architecture.md, "Doors and layers".
 */
export { type StateSyncTrust, parseStateSyncTrust } from './snapshot-choice.js';
