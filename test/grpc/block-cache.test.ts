/**
 * GetBlock's cache of encoded stored blocks (ts/grpc/block-cache.ts): found by height and by hash, bounded by
 * bytes (least recently used out first), emptied above a rollback's height, and never filled by a read that a
 * rollback overtook. GetBlock's answers themselves are pinned by methods.test.ts, blocks outside the window
 * included.
 */
import test from 'ava';
import type { Block } from '../../ts/chain/index.js';
import { EncodedBlockCache } from '../../ts/grpc/block-cache.js';
import { ChainEventFeed } from '../../ts/events/index.js';

const block = (index: number) => ({ index, hash: index.toString(16).padStart(64, 'a') }) as Block;
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

test('by height and by hash (any case, 0x or not); least recently used out first past the byte bound', (t) => {
  const cache = new EncodedBlockCache(new ChainEventFeed(), 400);
  for (let h = 1; h <= 4; h++) cache.put(block(h), bytes(100, h), cache.generation);
  t.is(cache.size, 4);
  t.is(cache.get({ height: 2 })?.[0], 2);
  t.is(cache.get({ hash: `0x${block(3).hash.toUpperCase()}` })?.[0], 3);
  // 1 is now the least recently used: the fifth block pushes it out.
  cache.put(block(5), bytes(100, 5), cache.generation);
  t.is(cache.get({ height: 1 }), undefined);
  t.is(cache.get({ hash: block(1).hash }), undefined);
  t.deepEqual(
    [2, 3, 4, 5].map((h) => cache.get({ height: h })?.[0]),
    [2, 3, 4, 5],
  );
  // An encoding over a quarter of the bound is not kept.
  cache.put(block(6), bytes(101, 6), cache.generation);
  t.is(cache.get({ height: 6 }), undefined);
});

test('a rollback drops the blocks above it; a read that spans a rollback is not kept', (t) => {
  const feed = new ChainEventFeed();
  const cache = new EncodedBlockCache(feed);
  for (let h = 1; h <= 5; h++) cache.put(block(h), bytes(10, h), cache.generation);
  const before = cache.generation;
  feed.rolledBack(3);
  t.deepEqual(
    [1, 2, 3, 4, 5].map((h) => cache.get({ height: h }) !== undefined),
    [true, true, true, false, false],
  );
  t.is(cache.get({ hash: block(4).hash }), undefined);
  // A block read before the rollback and answered after it.
  cache.put(block(4), bytes(10, 4), before);
  t.is(cache.get({ height: 4 }), undefined);
  cache.put(block(4), bytes(10, 9), cache.generation);
  t.is(cache.get({ height: 4 })?.[0], 9);
});
