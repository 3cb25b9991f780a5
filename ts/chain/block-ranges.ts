/**
 * Block ranges read straight from the store for a peer's range request: the stored encodings, without
 * decoding and re-encoding each block, a chunk at a time as the consumer pulls them (docs/p2p.md, "Serving
 * budgets"), so a range response holds one chunk in memory, not its whole 8 MiB.
 */
import { type KvStore, blockKey } from '../storage/index.js';

/** Blocks of the first database read when a peer's range request is answered (later reads are sized by bytes). */
const RANGE_READ_CHUNK = 8;
/** Bytes of blocks a range stream reads from the database at once (about). */
const RANGE_STREAM_CHUNK_BYTES = 512 * 1024;

/** Stored blocks [from, end) while their total stays within maxBytes (the first block always). */
export async function* streamStoredBlocks(db: KvStore, from: number, end: number, maxBytes: number): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  let sent = 0;
  for (let h = from; h < end; ) {
    // Sized by the blocks read so far: a chunk of large blocks stays near the bound, empty ones go dozens at once.
    const room = Math.min(maxBytes - bytes, RANGE_STREAM_CHUNK_BYTES);
    const fit = sent === 0 ? RANGE_READ_CHUNK : Math.ceil(room / (bytes / sent));
    const limit = Math.max(1, Math.min(end - h, fit, 32 * RANGE_READ_CHUNK));
    const rows = await db.range({ gte: blockKey(h), lt: blockKey(h + limit), limit });
    for (const [, v] of rows) {
      if (sent > 0 && bytes + v.length > maxBytes) return;
      bytes += v.length;
      sent++;
      yield v;
    }
    if (rows.length < limit) break;
    h += limit;
  }
}
