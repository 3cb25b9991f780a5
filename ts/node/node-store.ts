/**
 * The node's database. main.ts opens it as soon as the flags are read, so RocksDB opens on libuv's threads
 * (~50-150 ms: the manifest, the write-ahead log, the table files) while the rest of the node's modules load;
 * NativeNode.start takes the store over.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type KvStore, StoreLockedError, openRocksStore } from '../storage/index.js';

/** Another node (or any process) has this data dir's database open. */
export class DataDirInUseError extends Error {
  readonly code = 'DATA_DIR_IN_USE';
  constructor(dataDir: string, lockFile: string) {
    super(`data dir ${dataDir} is in use by another node (lock file ${lockFile}); stop that node or choose --data-dir`);
    this.name = 'DataDirInUseError';
  }
}

/** Open `<dataDir>/db` (the data dir created if missing); a locked one is a DataDirInUseError. */
export function openNodeStore(dataDir: string): Promise<KvStore> {
  const opening = (async () => {
    mkdirSync(dataDir, { recursive: true });
    try {
      return await openRocksStore(join(dataDir, 'db'));
    } catch (err) {
      if (err instanceof StoreLockedError) throw new DataDirInUseError(dataDir, err.lockFile);
      throw err;
    }
  })();
  // Awaited later (NativeNode.start); a failure before that is not an unhandled rejection.
  opening.catch(() => undefined);
  return opening;
}
