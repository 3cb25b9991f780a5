/**
 * Serving peers' requests under budgets (issue 29, findings 4, 5, 9 and the 32 MiB block): the budget
 * arithmetic, strict request parsing, and real libp2p hosts on 127.0.0.1 — the node's own P2PNetwork
 * serving, raw peers (test/helpers/rogue-requests.ts) that skip the handshake, send oversized or silent
 * request frames, flood concurrent requests or stop reading.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { pino } from 'pino';
import type { RangeSource } from '../../ts/network/block-range.js';
import { MAX_FRAME_BYTES, MAX_RANGE_REQUEST_BYTES, parseRangeRequest } from '../../ts/network/block-range.js';
import { CONSENSUS_REQUEST_BYTES, parseConsensusRequest } from '../../ts/network/consensus-sync.js';
import { P2PNetwork } from '../../ts/network/index.js';
import { RANGE_SERVING, ServingBudget } from '../../ts/network/serving-budget.js';
import { REQUEST_READ_TIMEOUT_MS, RequestAbuse } from '../../ts/network/serving.js';
import { closedWithin, exchange, lpFrame, rawHandshake, startRawPeer } from '../helpers/rogue-requests.js';
import { waitFor } from '../helpers/util.js';

const CHAIN_ID = 7120;
const GENESIS = 'cd'.repeat(32);
const MiB = 1024 * 1024;

test('the serving budget admits responses per peer and in total, and bounds bytes in flight', async (t) => {
  const b = new ServingBudget({ responses: 3, responsesPerPeer: 2, bytes: 10, bytesPerPeer: 6 });
  const a1 = b.tryAcquire('a');
  const a2 = b.tryAcquire('a');
  t.is(b.tryAcquire('a'), 'peer', "a third response for one peer is that peer's abuse");
  const c1 = b.tryAcquire('c');
  t.is(b.tryAcquire('d'), 'global', 'over the total: busy, nobody to blame');
  if (typeof a1 === 'string' || typeof a2 === 'string' || typeof c1 === 'string') throw new Error('admitted');
  t.deepEqual(b.usage(), { responses: 3, bytes: 0 });
  // A response holding nothing may always read (one block can exceed a share); one holding bytes waits.
  t.true(await a1.waitForBytes(0));
  a1.hold(7);
  t.false(await a1.waitForBytes(50), 'over the per-peer share: the next read waits, here past its deadline');
  const waiting = a1.waitForBytes(5_000);
  a1.sent(4);
  t.true(await waiting, 'bytes taken by the connection let it go on');
  t.deepEqual(b.usage('a'), { responses: 2, bytes: 3 });
  a2.hold(2);
  c1.hold(5);
  t.false(await c1.waitForBytes(20), 'over the total byte budget (10), though within its own share (6)');
  a1.release();
  a2.release();
  t.true(await c1.waitForBytes(20), 'released responses give their bytes back');
  c1.release();
  c1.release();
  t.deepEqual(b.usage(), { responses: 0, bytes: 0 }, 'a double release counts once');
  t.not(typeof b.tryAcquire('d'), 'string');
});

test('range and consensus requests are parsed strictly', (t) => {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o));
  t.deepEqual(parseRangeRequest(enc({ from: 5, count: 10 })), { from: 5, count: 10, maxBytes: 8 * MiB });
  t.deepEqual(parseRangeRequest(enc({ from: 0, count: 5000, max_bytes: 100 })), { from: 0, count: 1024, maxBytes: 100 });
  for (const bad of [
    { from: null, count: 1 },
    { from: '5', count: 1 },
    { from: 1, count: '10' },
    { from: 1.5, count: 1 },
    { from: -1, count: 1 },
    { from: 1, count: 0 },
    { from: 1 },
    { from: 1, count: 1, max_bytes: null },
    { from: 1, count: 1, max_bytes: '100' },
    [1, 1],
    null,
  ])
    t.throws(() => parseRangeRequest(enc(bad)), { instanceOf: RequestAbuse }, JSON.stringify(bad));
  t.throws(() => parseRangeRequest(Buffer.from('{"from":')), { instanceOf: RequestAbuse });
  const largest = enc({ from: Number.MAX_SAFE_INTEGER, count: 1024, max_bytes: 8 * MiB });
  t.true(largest.length <= MAX_RANGE_REQUEST_BYTES, `${largest.length} bytes`);
  t.is(parseConsensusRequest(enc({ height: 7 })), 7);
  for (const bad of [{ height: null }, { height: '7' }, { height: 0 }, {}, null])
    t.throws(() => parseConsensusRequest(enc(bad)), { instanceOf: RequestAbuse }, JSON.stringify(bad));
  t.true(enc({ height: Number.MAX_SAFE_INTEGER }).length <= CONSENSUS_REQUEST_BYTES);
});

/** Blocks of `size` bytes up to `head`, within the byte bound, streamed. */
function blocksOf(head: number, size: number): RangeSource {
  return async function* (from, count, maxBytes) {
    for (let h = from, bytes = 0; h < from + count && h <= head; h++, bytes += size) {
      if (h > from && bytes + size > maxBytes) return;
      yield new Uint8Array(size).fill(h % 256);
    }
  };
}

interface Served {
  server: P2PNetwork;
  addr: string;
  penalties: { peer: string; reason: string }[];
  refused: string[];
  txFrom: string[];
}

async function serve(blocks: RangeSource, blockByHash?: (hash: string) => Promise<Uint8Array | null>): Promise<Served> {
  const penalties: { peer: string; reason: string }[] = [];
  const refused: string[] = [];
  const txFrom: string[] = [];
  const log = {
    info: () => undefined,
    debug: () => undefined,
    warn: (o: object, m: string) => {
      const e = o as { peer: string; reason: string };
      if (m === 'peer penalized') penalties.push(e);
      if (m === 'peer refused at handshake') refused.push(e.peer);
    },
  };
  const server = new P2PNetwork({
    nodeKey: randomBytes(32),
    host: '127.0.0.1',
    port: 0,
    peers: [],
    chainId: CHAIN_ID,
    genesisHash: GENESIS,
    status: () => ({ chain_id: CHAIN_ID, genesis_hash: GENESIS, head_height: 100, head_hash: '00'.repeat(32) }),
    blocks,
    blockByHash,
    onTransaction: async (_bytes, from) => void txFrom.push(from),
    onBlock: async () => undefined,
    log,
  });
  await server.start();
  const a = server.listenAddrs.find((x) => x.includes('127.0.0.1')) as string;
  return { server, addr: a.includes('/p2p/') ? a : `${a}/p2p/${server.peerId}`, penalties, refused, txFrom };
}

async function client(addr: string): Promise<P2PNetwork> {
  const c = new P2PNetwork({
    nodeKey: randomBytes(32),
    host: '127.0.0.1',
    port: 0,
    peers: [addr],
    chainId: CHAIN_ID,
    genesisHash: GENESIS,
    status: () => ({ chain_id: CHAIN_ID, genesis_hash: GENESIS, head_height: 0, head_hash: '00'.repeat(32) }),
    blocks: async () => [],
    onTransaction: async () => undefined,
    onBlock: async () => undefined,
    log: pino({ level: 'silent' }),
  });
  await c.start();
  return c;
}

test('a block of 32 MiB is fetched by hash', async (t) => {
  const big = new Uint8Array(MAX_FRAME_BYTES).fill(7);
  const hash = 'ee'.repeat(32);
  const s = await serve(blocksOf(0, 1), async (h) => (h === hash ? big : null));
  const c = await client(s.addr);
  t.teardown(async () => void (await Promise.all([c.stop(), s.server.stop()])));
  await waitFor(() => c.connectedPeerIds().includes(s.server.peerId), 20_000, 'handshake');
  const got = await c.requestBlockByHash(s.server.peerId, hash);
  t.is(got?.length, MAX_FRAME_BYTES);
  t.is(got?.[MAX_FRAME_BYTES - 1], 7);
  t.is(await c.requestBlockByHash(s.server.peerId, 'ab'.repeat(32)), null, 'an unknown hash: empty answer');
});

test('request frames are bounded by the largest valid request: an oversized one is cut off and penalized', async (t) => {
  const s = await serve(blocksOf(10, 100), async () => null);
  t.teardown(() => s.server.stop());
  const raw = await startRawPeer({ chainId: CHAIN_ID, genesisHash: GENESIS, target: s.addr, status: 'silent' });
  t.teardown(() => raw.stop());
  await rawHandshake(raw, CHAIN_ID, GENESIS);
  // A length prefix announcing 4 MiB at a protocol whose request is 32 bytes, and the first 200 KB of it.
  const stream = await raw.open('block-by-hash');
  const t0 = Date.now();
  stream.send(Buffer.concat([Buffer.from([0x80, 0x80, 0x80, 0x02]), new Uint8Array(200 * 1024)]));
  const ms = await closedWithin(stream, t0);
  t.true(ms < 3_000, `closed after ${ms} ms`);
  await waitFor(() => s.penalties.some((p) => p.peer === raw.peerId && /over 32 bytes/.test(p.reason)), 10_000, 'penalty');
});

test('request streams that send nothing or one byte are closed by the read deadline', async (t) => {
  const s = await serve(blocksOf(10, 100));
  t.teardown(() => s.server.stop());
  const raw = await startRawPeer({ chainId: CHAIN_ID, genesisHash: GENESIS, target: s.addr, status: 'silent' });
  t.teardown(() => raw.stop());
  await rawHandshake(raw, CHAIN_ID, GENESIS);
  const t0 = Date.now();
  // Up to each protocol's per-peer limit: silent, or one byte of a length prefix.
  const streams = [
    await raw.open('blocks'),
    await raw.open('blocks'),
    await raw.open('consensus-sync'),
    await raw.open('block-by-hash'),
  ];
  streams[1].send(Uint8Array.of(0x80));
  streams[3].send(Uint8Array.of(0x05, 0x01));
  const closed = await Promise.all(streams.map((st) => closedWithin(st, t0)));
  t.log(`closed after ${closed.join(', ')} ms`);
  for (const ms of closed) t.true(ms >= REQUEST_READ_TIMEOUT_MS - 1_000 && ms < REQUEST_READ_TIMEOUT_MS + 10_000, `${ms} ms`);
  await waitFor(() => s.penalties.filter((p) => p.peer === raw.peerId).length >= 4, 10_000, 'a light penalty each');
  t.true(s.server.isHandshaken(raw.peerId), 'light penalties: still a peer');
});

test('the handshake is enforced: a peer that never completes it is not served and its gossip is not processed', async (t) => {
  const s = await serve(blocksOf(10, 100));
  t.teardown(() => s.server.stop());
  const honest = await client(s.addr);
  t.teardown(() => honest.stop());
  const raw = await startRawPeer({ chainId: CHAIN_ID, genesisHash: GENESIS, target: s.addr, status: 'silent' });
  t.teardown(() => raw.stop());
  await waitFor(() => honest.connectedPeerIds().includes(s.server.peerId), 20_000, 'the honest client handshakes');
  // The honest peer's gossip arrives (this also waits for the subscriptions to be known)...
  await waitFor(
    async () => {
      honest.publishTransaction(randomBytes(50));
      await raw.publish('txs', randomBytes(50));
      return s.txFrom.includes(honest.peerId);
    },
    30_000,
    "the honest client's transactions arrive",
  );
  // The peer without a handshake sends 10 messages; the server's gossip counter shows them received (and
  // ignored) before the honest client's next batch, whose arrival ends the wait below.
  const received = s.server.counters.received;
  for (let i = 0; i < 10; i++) await raw.publish('txs', randomBytes(60));
  await waitFor(() => s.server.counters.received >= received + 10, 20_000, "the peer's messages reach the server");
  honest.publishTransaction(randomBytes(51));
  await waitFor(() => s.txFrom.filter((f) => f === honest.peerId).length >= 2, 20_000, 'a later honest batch');
  t.false(s.txFrom.includes(raw.peerId), 'nothing from the peer without a handshake was processed');
  t.false(s.server.isHandshaken(raw.peerId));
  t.false(
    s.server.peers().some((p) => p.peer_id === raw.peerId),
    'not listed as a peer',
  );
  await t.throwsAsync(exchange(await raw.open('blocks'), lpFrame(Buffer.from('{"from":1,"count":5}'))), undefined, 'no blocks');
});

test('a peer refused as another chain gets nothing during the grace period', async (t) => {
  const s = await serve(blocksOf(10, 100));
  t.teardown(() => s.server.stop());
  const raw = await startRawPeer({ chainId: CHAIN_ID, genesisHash: GENESIS, target: s.addr, status: 'none' });
  t.teardown(() => raw.stop());
  await waitFor(() => s.refused.includes(raw.peerId), 20_000, 'refused at identify');
  const t0 = Date.now();
  await t.throwsAsync(exchange(await raw.open('blocks'), lpFrame(Buffer.from('{"from":1,"count":5}'))));
  t.true(Date.now() - t0 < 2000, 'asked within the 2 s grace period');
  await t.throwsAsync(rawHandshake(raw, CHAIN_ID, GENESIS), undefined, 'its status request is not answered either');
});

test('range responses stay within the serving budget: concurrent floods are refused, slow readers cut off', async (t) => {
  const s = await serve(blocksOf(1000, MiB));
  t.teardown(() => s.server.stop());
  const raw = await startRawPeer({ chainId: CHAIN_ID, genesisHash: GENESIS, target: s.addr, status: 'silent' });
  t.teardown(() => raw.stop());
  await rawHandshake(raw, CHAIN_ID, GENESIS);
  // Two ranges of 1 MiB blocks that are never read.
  const slow = [await raw.open('blocks'), await raw.open('blocks')];
  for (const st of slow) {
    st.pause();
    st.send(lpFrame(Buffer.from('{"from":1,"count":1024}')));
  }
  await waitFor(() => s.server.budgets.blocks.usage(raw.peerId).responses === 2, 10_000, 'both admitted');
  const third = await raw.open('blocks');
  const t0 = Date.now();
  t.true((await closedWithin(third, t0)) < 3_000, 'a third concurrent range is refused');
  await waitFor(() => s.penalties.some((p) => p.peer === raw.peerId && /concurrent blocks/.test(p.reason)), 10_000, 'penalty');
  let peak = 0;
  const watch = setInterval(() => {
    peak = Math.max(peak, s.server.budgets.blocks.usage().bytes);
  }, 20);
  t.teardown(() => clearInterval(watch));
  // An honest client is still served meanwhile.
  const honest = await client(s.addr);
  t.teardown(() => honest.stop());
  await waitFor(() => honest.connectedPeerIds().includes(s.server.peerId), 20_000, 'handshake');
  t.is((await honest.requestBlocks(s.server.peerId, 1, 4)).length, 4);
  // The stalled responses are abandoned: their slots and bytes come back.
  await waitFor(() => s.server.budgets.blocks.usage().responses === 0, 30_000, 'the slow readers are cut off');
  clearInterval(watch);
  t.log(`peak bytes in flight ${(peak / MiB).toFixed(1)} MiB`);
  t.true(peak <= RANGE_SERVING.bytesPerPeer + 2 * MiB, `peak ${peak}`);
  t.deepEqual(s.server.budgets.blocks.usage(), { responses: 0, bytes: 0 });
});
