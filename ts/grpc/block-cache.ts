/**
 * GetBlock's answers for blocks read from the store (outside the in-memory window, or asked for by hash),
 * encoded once and kept in a bounded LRU: a finalized block never changes, so its encoding is reused and the
 * answer needs neither a store read nor protobuf-es' reflective encoding. Blocks in the window already answer
 * from memory (shapes.ts caches their encodings per block object).
 *
 * The one thing that can unmake a stored block is a rollback (the dev chain's evm_revert / anvil_reset): it
 * drops every entry above the new head, and a read that was in flight across it is not cached.
 */
import { normHash } from '../util/index.js';
import type { Block, NodeContext } from '../services/index.js';
import type { ChainEventFeed } from '../events/index.js';

/** Bytes of encodings kept per node: room for thousands of ordinary blocks, a few full ones. */
export const ENCODED_BLOCK_CACHE_BYTES = 64 * 1_048_576;

interface Entry {
  height: number;
  hash: string;
  bytes: Uint8Array;
}

export class EncodedBlockCache {
  /** By height, least recently used first (a Map keeps insertion order; a hit moves its entry to the end). */
  private readonly byHeight = new Map<number, Entry>();
  private readonly byHash = new Map<string, Entry>();
  private bytes = 0;
  /** Rollbacks seen: a store read that spans one is not cached. */
  generation = 0;

  constructor(
    feed: ChainEventFeed,
    readonly maxBytes = ENCODED_BLOCK_CACHE_BYTES,
  ) {
    feed.onRollback((height) => this.dropAbove(height));
  }

  get size(): number {
    return this.byHeight.size;
  }

  /** The encoding of the block at `height`, or with `hash` (hex, any case, 0x or not); undefined when not kept. */
  get(sel: { height: number } | { hash: string }): Uint8Array | undefined {
    const entry = 'height' in sel ? this.byHeight.get(sel.height) : this.byHash.get(normHash(sel.hash));
    if (entry === undefined) return undefined;
    this.byHeight.delete(entry.height);
    this.byHeight.set(entry.height, entry);
    return entry.bytes;
  }

  /** Keeps a block's encoding, read under `generation` (nothing when a rollback came since, or it is too large). */
  put(block: Block, bytes: Uint8Array, generation: number): void {
    if (generation !== this.generation || bytes.byteLength > this.maxBytes / 4) return;
    this.remove(this.byHeight.get(block.index));
    const entry: Entry = { height: block.index, hash: normHash(block.hash), bytes };
    this.byHeight.set(entry.height, entry);
    this.byHash.set(entry.hash, entry);
    this.bytes += bytes.byteLength;
    for (const oldest of this.byHeight.values()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(oldest);
    }
  }

  private dropAbove(height: number): void {
    this.generation++;
    for (const entry of [...this.byHeight.values()]) if (entry.height > height) this.remove(entry);
  }

  private remove(entry: Entry | undefined): void {
    if (entry === undefined) return;
    this.byHeight.delete(entry.height);
    if (this.byHash.get(entry.hash) === entry) this.byHash.delete(entry.hash);
    this.bytes -= entry.bytes.byteLength;
  }
}

const caches = new WeakMap<NodeContext, EncodedBlockCache | null>();

/** The node's cache; null without an event feed (no rollback would be seen, so nothing is cached). */
export function encodedBlockCache(ctx: NodeContext): EncodedBlockCache | null {
  let cache = caches.get(ctx);
  if (cache === undefined) {
    cache = ctx.events ? new EncodedBlockCache(ctx.events) : null;
    caches.set(ctx, cache);
  }
  return cache;
}
