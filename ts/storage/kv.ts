import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { KvBatch, KvOp, KvStore } from './interface.js';

export type { KvBatch, KvOp, KvStore } from './interface.js';

const require = createRequire(import.meta.url);

/** Add ops (in order) to a batch. */
export function addOps(batch: KvBatch, ops: readonly KvOp[]): void {
  for (const op of ops) {
    if (op.type === 'put') batch.put(op.key, op.value as Buffer);
    else batch.del(op.key);
  }
}

interface RocksIterator {
  nextv(n: number): Promise<[Buffer, Buffer][]>;
  all(): Promise<[Buffer, Buffer][]>;
  close(): Promise<void>;
}

interface RocksDb {
  open(): Promise<void>;
  close(): Promise<void>;
  get(key: Buffer): Promise<Buffer | undefined>;
  _getManySync(keys: Buffer[], opts: object): (Buffer | undefined)[];
  batch(ops: { type: 'put' | 'del'; key: Buffer; value?: Buffer }[], opts?: object): Promise<void>;
  iterator(opts: object): RocksIterator;
  querySync(opts: object): { rows: Buffer[]; finished: boolean };
  clear(opts: object): Promise<void>;
}

/** The database is open in another process (RocksDB holds an exclusive lock on `<dir>/LOCK`). */
export class StoreLockedError extends Error {
  readonly code = 'STORE_LOCKED';
  constructor(
    readonly dir: string,
    readonly lockFile: string,
  ) {
    super(`database ${dir} is locked by another process (lock file ${lockFile})`);
    this.name = 'StoreLockedError';
  }
}

/**
 * The store was closed: a write or synchronous read after `close()` (a background writer such as the
 * history indexer stops on it). Refused here because the addon would touch a closed database.
 */
export class StoreClosedError extends Error {
  readonly code = 'STORE_CLOSED';
  constructor() {
    super('the database is closed');
    this.name = 'StoreClosedError';
  }
}

interface RocksBinding {
  batch_init(): unknown;
  batch_put(batch: unknown, key: Buffer, value: Buffer, opts: object): void;
  batch_del(batch: unknown, key: Buffer, opts: object): void;
  batch_write(db: unknown, batch: unknown, opts: object): void;
  batch_clear(batch: unknown): void;
}

const NO_OPTIONS = {};

type BatchWriter = (o: { sync: boolean }) => KvBatch;

/**
 * A block's batch (tens of thousands of ops) straight into the addon's WriteBatch: the abstract-level
 * layer of `db.batch` checks and copies every op first, which costs as much as RocksDB's own write
 * (docs/storage.md, "Block commit"). The addon writes a batch on the calling thread either way. Null when
 * this version of the package does not expose what it needs (then `db.batch` is used).
 */
function directBatch(db: RocksDb, isClosed: () => boolean): BatchWriter | null {
  let binding: RocksBinding;
  try {
    binding = require('@nxtedition/rocksdb/binding') as RocksBinding;
  } catch {
    return null;
  }
  const sym = Object.getOwnPropertySymbols(db).find((s) => s.description === 'context');
  if (!sym || typeof binding.batch_init !== 'function' || typeof binding.batch_write !== 'function') return null;
  const context = (db as unknown as Record<symbol, unknown>)[sym];
  return (defaults) => {
    const wb = binding.batch_init();
    let size = 0;
    let done = false;
    return {
      put(key, value) {
        binding.batch_put(wb, key, value, NO_OPTIONS);
        size++;
      },
      del(key) {
        binding.batch_del(wb, key, NO_OPTIONS);
        size++;
      },
      get size() {
        return size;
      },
      async write(o) {
        if (done) throw new Error('batch already written');
        done = true;
        if (isClosed()) {
          binding.batch_clear(wb);
          throw new StoreClosedError();
        }
        try {
          binding.batch_write(context, wb, o?.sync === undefined ? defaults : { sync: o.sync });
        } finally {
          binding.batch_clear(wb);
        }
      },
    };
  };
}

/** The same over `db.batch` (ops collected, then checked and written by abstract-level). */
function levelBatch(db: RocksDb, isClosed: () => boolean): BatchWriter {
  return (defaults) => {
    const ops: KvOp[] = [];
    return {
      put: (key, value) => ops.push({ type: 'put', key, value }),
      del: (key) => ops.push({ type: 'del', key }),
      get size() {
        return ops.length;
      },
      write: async (o) => {
        if (isClosed()) throw new StoreClosedError();
        return db.batch(ops, o?.sync === undefined ? defaults : { sync: o.sync });
      },
    };
  };
}

/** Open (creating if needed) the RocksDB database in dir. */
export async function openRocksStore(dir: string, opts: { sync?: boolean } = {}): Promise<KvStore> {
  const { RocksLevel } = require('@nxtedition/rocksdb') as { RocksLevel: new (dir: string, o: object) => RocksDb };
  // walCompression off: the package's default compresses every write-ahead-log record with ZSTD on the
  // writing (main) thread, ~15-20 ms of a 10,000-transfer block's commit for little gain (the log is mostly
  // block bodies: signatures and hashes). The log itself stays on (docs/storage.md, "Block commit").
  const db = new RocksLevel(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', walCompression: false });
  try {
    await db.open();
  } catch (err) {
    // abstract-level reports "Database is not open" and keeps RocksDB's reason in `cause`.
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') throw new StoreLockedError(dir, join(dir, 'LOCK'));
    throw err;
  }
  const writeOpts = { sync: opts.sync ?? false };
  let closed = false;
  const isClosed = () => closed;
  const open = () => {
    if (closed) throw new StoreClosedError();
  };
  const newBatch = directBatch(db, isClosed) ?? levelBatch(db, isClosed);
  return {
    async get(key) {
      try {
        const v = await db.get(key);
        return v ?? undefined;
      } catch (err) {
        if ((err as { code?: string }).code === 'LEVEL_NOT_FOUND') return undefined;
        throw err;
      }
    },
    getManySync: (keys) => {
      open();
      return db._getManySync(keys, {}).map((v) => v ?? undefined);
    },
    write(ops, o) {
      const b = newBatch(writeOpts);
      addOps(b, ops);
      return b.write(o);
    },
    batch: () => newBatch(writeOpts),
    async range({ gte, lt, reverse, limit }) {
      const it = db.iterator({ gte, lt, reverse: reverse ?? false, limit: limit ?? -1 });
      try {
        return await it.all();
      } finally {
        await it.close().catch(() => undefined);
      }
    },
    rangeSync({ gte, lt, limit }) {
      open();
      const { rows } = db.querySync({ gte, lt, limit: limit ?? -1, keyEncoding: 'buffer', valueEncoding: 'buffer' });
      const out: [Buffer, Buffer][] = [];
      for (let i = 0; i < rows.length; i += 2) out.push([rows[i], rows[i + 1]]);
      return out;
    },
    // Without a limit the package deletes the range with RocksDB's DeleteRange (one tombstone).
    async clearRange({ gte, lt }) {
      open();
      await db.clear({ gte, lt });
    },
    async scan({ gte, lt, chunk: rows }, onEntry) {
      const it = db.iterator({ gte, lt });
      try {
        for (;;) {
          const chunk = await it.nextv(rows ?? 10_000);
          if (chunk.length === 0) break;
          for (const [k, v] of chunk) onEntry(k, v);
        }
      } finally {
        await it.close().catch(() => undefined);
      }
    },
    close: () => {
      closed = true;
      return db.close();
    },
  };
}
