/**
 * The block-range protocol between two real libp2p hosts on 127.0.0.1 (the node's own P2PNetwork):
 * responses bounded by bytes (at least one block), a peer that breaks the bounds reported as
 * misbehaving, ranges requested ahead of the importer (pipelined), and a peer that goes away mid-range:
 * the blocks that arrived are handed on in order, then the download fails with RangeInterrupted.
 * Blocks here are opaque frames (the protocol does not decode them); each starts with its height.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { pino } from 'pino';
import { MAX_RANGE_BYTES, P2PNetwork, PeerMisbehaviour, RangeInterrupted } from '../../ts/network/index.js';
import type { RangeSource } from '../../ts/network/block-range.js';
import { RangeFetcher } from '../../ts/sync/index.js';
import { waitFor } from '../helpers/util.js';

const CHAIN_ID = 7120;
const GENESIS = 'ab'.repeat(32);
const MiB = 1024 * 1024;

/** A frame of `size` bytes whose first 4 bytes are the height. */
function frame(height: number, size: number): Uint8Array {
  const f = new Uint8Array(size);
  new DataView(f.buffer).setUint32(0, height);
  return f;
}
const heightOf = (f: Uint8Array) => new DataView(f.buffer, f.byteOffset).getUint32(0);

/** What an honest peer answers: blocks of `size` bytes up to `head`, within the byte bound. */
function honest(head: number, size: number): RangeSource {
  return async (from, count, maxBytes) => {
    const out: Uint8Array[] = [];
    for (let h = from; h < from + count && h <= head; h++) {
      if (out.length > 0 && (out.length + 1) * size > maxBytes) break;
      out.push(frame(h, size));
    }
    return out;
  };
}

async function host(blocks: RangeSource, peers: string[] = []): Promise<P2PNetwork> {
  const net = new P2PNetwork({
    nodeKey: randomBytes(32),
    host: '127.0.0.1',
    port: 0,
    peers,
    chainId: CHAIN_ID,
    genesisHash: GENESIS,
    status: () => ({ chain_id: CHAIN_ID, genesis_hash: GENESIS, head_height: 0, head_hash: '00'.repeat(32) }),
    blocks,
    onTransaction: async () => undefined,
    onBlock: async () => undefined,
    log: pino({ level: 'silent' }),
  });
  await net.start();
  return net;
}

/** A serving peer and a client connected to it (handshake done). */
async function pair(blocks: RangeSource): Promise<{ server: P2PNetwork; client: P2PNetwork; stop: () => Promise<void> }> {
  const server = await host(blocks);
  const addr = server.listenAddrs.find((a) => a.includes('127.0.0.1')) as string;
  const client = await host(honest(0, 1), [addr.includes('/p2p/') ? addr : `${addr}/p2p/${server.peerId}`]);
  await waitFor(() => client.connectedPeerIds().includes(server.peerId), 20_000, 'the client connects and handshakes');
  return { server, client, stop: async () => void (await Promise.all([client.stop(), server.stop()])) };
}

test('a range response stops at the byte bound and always holds one block', async (t) => {
  const p = await pair(honest(100, 3 * MiB));
  t.teardown(p.stop);
  const got = await p.client.requestBlocks(p.server.peerId, 10, 50);
  t.deepEqual(got.map(heightOf), [10, 11], 'two 3 MiB blocks fit in the 8 MiB bound, a third does not');
  const small: Uint8Array[] = [];
  const reply = await p.client.streamBlocks(p.server.peerId, { from: 1, count: 50, maxBytes: 4 * MiB }, (f) => small.push(f));
  t.is(reply.blocks, 1, 'a requester may ask for a smaller bound');
  t.is(reply.bytes, 3 * MiB);
  const big = await pair(honest(100, MAX_RANGE_BYTES + MiB));
  t.teardown(big.stop);
  t.deepEqual((await big.client.requestBlocks(big.server.peerId, 5, 10)).map(heightOf), [5], 'a block over the bound goes alone');
});

test('a peer answering beyond the requested count or byte bound is misbehaving', async (t) => {
  const overBytes = await pair(async (from) => [0, 1, 2, 3].map((i) => frame(from + i, 3 * MiB)));
  t.teardown(overBytes.stop);
  const e1 = await t.throwsAsync(overBytes.client.requestBlocks(overBytes.server.peerId, 1, 10));
  t.true(e1 instanceof PeerMisbehaviour, String(e1));
  const overCount = await pair(async (from, count) => Array.from({ length: count + 1 }, (_, i) => frame(from + i, 100)));
  t.teardown(overCount.stop);
  const e2 = await t.throwsAsync(overCount.client.requestBlocks(overCount.server.peerId, 1, 5));
  t.true(e2 instanceof PeerMisbehaviour, String(e2));
});

test('ranges are requested ahead of the importer, and blocks come out in order', async (t) => {
  const requests: number[] = [];
  const serve = honest(40, 3 * MiB);
  const p = await pair((from, count, maxBytes) => {
    requests.push(from);
    return serve(from, count, maxBytes);
  });
  t.teardown(p.stop);
  const fetcher = new RangeFetcher(p.client, p.server.peerId, 1, () => 40);
  fetcher.start();
  t.teardown(() => fetcher.stop());
  // Nothing taken yet: the second range is already on its way (the queue holds two ranges' worth).
  await waitFor(() => requests.length >= 2, 20_000, 'a second range request before the first is imported');
  t.deepEqual(requests.slice(0, 2), [1, 3]);
  const heights: number[] = [];
  for (;;) {
    const frames = await fetcher.take(5, 8 * MiB);
    if (frames.length === 0) break;
    heights.push(...frames.map(heightOf));
  }
  t.deepEqual(
    heights,
    Array.from({ length: 40 }, (_, i) => i + 1),
  );
  t.is(fetcher.stats.blocks, 40);
  t.true(fetcher.stats.ranges >= 20);
});

test('a peer that disconnects mid-range: the blocks that arrived come out in order, then RangeInterrupted', async (t) => {
  let server: P2PNetwork | null = null;
  let fetcher: RangeFetcher | null = null;
  const p = await pair(async function* (from, count) {
    for (let h = from; h < from + count; h++) {
      if (h === 8) {
        // The peer goes away in the middle of its answer (its whole host stops), once what it sent arrived.
        await waitFor(() => (fetcher?.stats.blocks ?? 0) >= 7, 20_000, 'the first blocks arrive');
        await server?.stop();
        return;
      }
      yield frame(h, 64 * 1024);
    }
  });
  server = p.server;
  t.teardown(p.stop);
  const f = new RangeFetcher(p.client, p.server.peerId, 1, () => 100);
  fetcher = f;
  f.start();
  t.teardown(() => f.stop());
  const heights: number[] = [];
  const err = await t.throwsAsync(async () => {
    for (;;) {
      const frames = await f.take(100, 8 * MiB);
      if (frames.length === 0) return;
      heights.push(...frames.map(heightOf));
    }
  });
  t.true(err instanceof RangeInterrupted, String(err));
  t.deepEqual(heights, [1, 2, 3, 4, 5, 6, 7], 'every block sent before the disconnect, in order');
});
