/**
 * Restoring a state from a snapshot's chunks into a fresh database (docs/p2p.md, "State sync", "Restoring"):
 * chunks in any order, each verified before anything of it is written; its entries and the progress record go
 * in one batch, so a restart resumes with the chunks already written; each chunk's entries go into the trie as
 * they are written. At the end the trie must hash to the manifest's root and is saved as the trie checkpoint of
 * the snapshot block.
 */
import { checkpointMeta } from '../chain/index.js';
import { StateStore } from '../state/index.js';
import { type KvStore, P, metaKey, prefixEnd, stateKey } from '../storage/index.js';
import { SnapshotManifestError } from './errors.js';
import { type SnapshotManifest, manifestId } from './format.js';
import { verifyChunk, verifyManifest } from './verify.js';

/** The `M` record of a restore in progress: `{ id, done (hex bitmap of the chunks written), complete }`. */
export const RESTORE_PROGRESS_KEY = metaKey('snapshot-restore');

interface Progress {
  id: string;
  done: string;
  complete: boolean;
}

/** A database that holds state but is not this snapshot's restore in progress. */
export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

export class SnapshotRestorer {
  private readonly done: Uint8Array;
  /** Chunks being written (a second copy arriving meanwhile is dropped). */
  private readonly writing = new Set<number>();
  private written = 0;
  /**
   * The restored state: each chunk's entries go into its trie as they are written, so finish() need not read
   * `S` back — unless the restore resumed (chunks written by an earlier run are not in it): then it rebuilds.
   */
  private readonly state: StateStore;
  private readonly resumed: boolean;
  /**
   * The chunk writes, one after the other: each writes the progress record of every chunk written before it, so
   * two chunks written at once must not each name only the chunks done before both (the later write would
   * drop the other's bit, and a restart would fetch that chunk again).
   */
  private writes: Promise<void> = Promise.resolve();

  private constructor(
    private readonly db: KvStore,
    readonly manifest: SnapshotManifest,
    readonly id: string,
    done: Uint8Array,
  ) {
    this.done = done;
    for (let i = 0; i < manifest.chunks.length; i++) if (this.isDone(i)) this.written++;
    this.state = new StateStore({ db });
    this.resumed = this.written > 0;
  }

  /**
   * Begin (or resume) restoring `manifest` into `db`: the manifest must verify (against `trustedRoot` when given:
   * the trusted block's state root), and `db` must hold no state, or this manifest's restore in progress.
   */
  static async open(db: KvStore, manifest: SnapshotManifest, trustedRoot?: string): Promise<SnapshotRestorer> {
    verifyManifest(manifest, trustedRoot);
    const id = manifestId(manifest);
    const bitmapBytes = Math.ceil(manifest.chunks.length / 8);
    const raw = await db.get(RESTORE_PROGRESS_KEY);
    if (raw !== undefined) {
      const p = JSON.parse(raw.toString('utf8')) as Progress;
      if (p.id !== id) throw new RestoreRefusedError(`the database holds the restore of another snapshot (${p.id})`);
      const done = Buffer.from(p.done, 'hex');
      if (done.length !== bitmapBytes) throw new RestoreRefusedError('the restore progress record does not fit the manifest');
      return new SnapshotRestorer(db, manifest, id, done);
    }
    const table = Buffer.from([P.state]);
    if ((await db.range({ gte: table, lt: prefixEnd(table), limit: 1 })).length > 0)
      throw new RestoreRefusedError('the database already holds state: restore into a fresh data directory');
    return new SnapshotRestorer(db, manifest, id, new Uint8Array(bitmapBytes));
  }

  /** The manifest id of the restore in progress in `db` (finished or not), or null when there is none. */
  static async inProgress(db: KvStore): Promise<string | null> {
    const raw = await db.get(RESTORE_PROGRESS_KEY);
    return raw === undefined ? null : (JSON.parse(raw.toString('utf8')) as Progress).id;
  }

  /**
   * Throw away an unfinished restore (its state entries and progress record): the joining node restarted and
   * its snapshot is no longer offered, so it starts over with another. Only for a store without a chain head.
   */
  static async discard(db: KvStore): Promise<void> {
    const table = Buffer.from([P.state]);
    for (;;) {
      const rows = await db.range({ gte: table, lt: prefixEnd(table), limit: 10_000 });
      if (rows.length === 0) break;
      const batch = db.batch();
      for (const [k] of rows) batch.del(k);
      await batch.write();
    }
    await db.write([{ type: 'del', key: RESTORE_PROGRESS_KEY }], { sync: true });
  }

  isDone(index: number): boolean {
    return (this.done[index >> 3] & (1 << (index & 7))) !== 0;
  }

  /** Chunks still to be written, ascending. */
  missing(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.manifest.chunks.length; i++) if (!this.isDone(i) && !this.writing.has(i)) out.push(i);
    return out;
  }

  get chunksDone(): number {
    return this.written;
  }

  get complete(): boolean {
    return this.written === this.manifest.chunks.length;
  }

  /**
   * Verify chunk `index` and write its entries. False when it was already written (or is being written).
   * Throws SnapshotChunkError (the sender's fault) or SnapshotManifestError (the manifest's), writing nothing.
   */
  async addChunk(index: number, bytes: Buffer): Promise<boolean> {
    if (this.isDone(index) || this.writing.has(index)) return false;
    const entries = verifyChunk(this.manifest, index, bytes);
    this.writing.add(index);
    try {
      const write = this.writes.then(async () => {
        const batch = this.db.batch();
        for (const e of entries) batch.put(stateKey(e.key), e.value);
        const done = Uint8Array.from(this.done);
        done[index >> 3] |= 1 << (index & 7);
        batch.put(RESTORE_PROGRESS_KEY, progressRecord(this.id, done, false));
        await batch.write();
        this.done[index >> 3] |= 1 << (index & 7);
        this.written++;
      });
      this.writes = write.catch(() => undefined);
      await write;
      this.state.loadCommitted(
        entries.map((e) => e.key),
        entries.map((e) => e.value),
      );
      return true;
    } finally {
      this.writing.delete(index);
    }
  }

  /**
   * Every chunk written: the state's trie (rebuilt from `S` after a resume) checked against the manifest's root, saved as the
   * trie checkpoint of the snapshot block at `checkpointPath` (when given and the trie has checkpoints), and the
   * progress record marked complete. Returns the restored state.
   */
  async finish(checkpointPath?: string): Promise<StateStore> {
    if (!this.complete) throw new Error(`${this.manifest.chunks.length - this.written} snapshot chunks are still missing`);
    const state = this.state;
    if (this.resumed) {
      state.replaceTrie(null);
      await state.rebuildTrie();
    }
    const root = state.root().toString('hex');
    if (root !== this.manifest.state_root)
      throw new SnapshotManifestError(`the restored state hashes to ${root}, not the manifest's ${this.manifest.state_root}`);
    if (checkpointPath !== undefined) {
      const meta = checkpointMeta({ index: this.manifest.height, hash: this.manifest.block_hash, state_root: root });
      await state.saveTrieCheckpoint(checkpointPath, meta);
    }
    await this.db.write([{ type: 'put', key: RESTORE_PROGRESS_KEY, value: progressRecord(this.id, this.done, true) }], {
      sync: true,
    });
    return state;
  }
}

function progressRecord(id: string, done: Uint8Array, complete: boolean): Buffer {
  return Buffer.from(JSON.stringify({ id, done: Buffer.from(done).toString('hex'), complete }), 'utf8');
}
