/**
 * The contract of ts/storage: what the node's other folders rely on, implemented by the RocksDB store
 * (kv.ts). Key layout: keys.ts.
 */

/** One write of a batch. Consumers: ts/chain and ts/state building a block's commit. */
export interface KvOp {
  type: 'put' | 'del';
  key: Buffer;
  value?: Buffer;
}

/**
 * A write batch filled op by op and written atomically by `write()` (once): the block commit's tens of
 * thousands of keys go in as they are built, with no op object per key.
 */
export interface KvBatch {
  put(key: Buffer, value: Buffer): void;
  del(key: Buffer): void;
  /** Ops added so far. */
  readonly size: number;
  write(opts?: { sync?: boolean }): Promise<void>;
}

/**
 * The narrow storage interface the rest of the node uses; RocksDB (kv.ts) is the one implementation.
 * Consumers: ts/chain (BlockStore: block commits, indexes, receipts), ts/state (the `S` table and the state
 * history), ts/services (state indexes, the audit log), ts/verify (verified contracts), ts/node (opens it).
 */
export interface KvStore {
  get(key: Buffer): Promise<Buffer | undefined>;
  /** Synchronous multi-get (RocksDB reads from its block cache / OS pages on the calling thread). */
  getManySync(keys: Buffer[]): (Buffer | undefined)[];
  /** One atomic write batch; `sync` waits for the write-ahead log's fsync (durable through a power loss). */
  write(ops: KvOp[], opts?: { sync?: boolean }): Promise<void>;
  /** An empty batch for this store (see KvBatch). */
  batch(): KvBatch;
  /** Keys/values with gte <= key < lt, in order (or reverse), at most limit. */
  range(opts: { gte: Buffer; lt: Buffer; reverse?: boolean; limit?: number }): Promise<[Buffer, Buffer][]>;
  /**
   * Synchronous range read (a RocksDB iterator on the calling thread, ~5 µs for a short range): historical
   * state reads, which must answer in the tick they are asked in.
   */
  rangeSync(opts: { gte: Buffer; lt: Buffer; limit?: number }): [Buffer, Buffer][];
  /**
   * Delete every key with gte <= key < lt at once (one RocksDB range tombstone, DeleteRange): dropping a
   * whole table of millions of rows without reading it.
   */
  clearRange(opts: { gte: Buffer; lt: Buffer }): Promise<void>;
  /**
   * Stream a whole key range in chunks (state loading at start), `chunk` rows per read (default 10,000; a
   * background reader asks fewer to keep each turn of the event loop short). The view is the database's when
   * the call is made: later writes are not seen.
   */
  scan(opts: { gte: Buffer; lt: Buffer; chunk?: number }, onEntry: (k: Buffer, v: Buffer) => void): Promise<void>;
  close(): Promise<void>;
}
