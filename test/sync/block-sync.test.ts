/**
 * BlockSync catching up through its network interface, with the transport faked in process: each fake
 * peer serves the stored blocks of a real chain (RocksDB in a temp dir, real signatures) built in this
 * process, and a liar serves one of them forged. The syncing chain is real too: every block goes
 * through its validity rule.
 */
import test, { type ExecutionContext } from 'ava';
import { type Block, type Chain, decodeBlock, encodeBlock } from '../../ts/chain/index.js';
import { DEFAULT_MEMPOOL_LIMITS, Mempool, TxAdmission } from '../../ts/mempool/index.js';
import { IgnoredMessage, MAX_RANGE_BYTES, type P2PNetwork, PeerMisbehaviour } from '../../ts/network/index.js';
import { BlockSync, FALSE_HEAD_PENALTY, type SyncLog } from '../../ts/sync/block-sync.js';
import { NOW, alice, bob, openFixtureChain, proposerKey, reseal, transfer } from '../helpers/chain-fixture.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** What BlockSync uses of the network. */
type SyncTransport = Pick<
  P2PNetwork,
  'peerHeights' | 'notePeerHeight' | 'penalize' | 'refreshPeerStatus' | 'streamBlocks' | 'isHandshaken'
>;

interface FakePeer {
  chain: Chain;
  /** What the peer claims its head is (refreshPeerStatus reports it; the real head when unset). */
  claims?: number;
  /** A forger: changes the block of this height before sending it. */
  forge?: (b: Block) => Block;
  /** The connection drops after this many blocks sent (in all). */
  dropsAfter?: number;
  /** Blocks sent so far. */
  sent?: number;
  /** Requests wait for this (a test orders its peers' answers with it). */
  gate?: Promise<void>;
}

/** Peers in process: ranges are read from their chains' block stores, as a serving node reads them. */
class FakeTransport implements SyncTransport {
  readonly heights = new Map<string, number>();
  readonly peers = new Map<string, FakePeer>();
  readonly requests: { peer: string; from: number; count: number }[] = [];
  readonly penalties: { peer: string; points: number; reason: string }[] = [];

  /** A peer that connected and passed the handshake (its status reported its head). */
  connect(id: string, peer: FakePeer): void {
    this.peers.set(id, peer);
    this.heights.set(id, peer.claims ?? peer.chain.height);
  }

  isHandshaken(peer: string): boolean {
    return this.peers.has(peer);
  }

  peerHeights(): Map<string, number> {
    return this.heights;
  }

  notePeerHeight(peer: string, height: number): void {
    if (height > (this.heights.get(peer) ?? -1)) this.heights.set(peer, height);
  }

  async penalize(peer: string, points: number, reason: string): Promise<void> {
    this.penalties.push({ peer, points, reason });
  }

  async refreshPeerStatus(): Promise<void> {
    for (const [id, p] of this.peers) this.heights.set(id, p.claims ?? p.chain.height);
  }

  async streamBlocks(
    peer: string,
    req: { from: number; count: number; maxBytes?: number },
    onBlock: (frame: Uint8Array) => void,
  ): Promise<{ blocks: number; bytes: number }> {
    const p = this.peers.get(peer);
    if (!p) throw new Error(`not connected to ${peer}`);
    this.requests.push({ peer, ...req });
    await p.gate;
    const frames = await p.chain.blocks.encodedBlocks(req.from, req.count, req.maxBytes ?? MAX_RANGE_BYTES);
    let bytes = 0;
    for (const f of frames) {
      if (p.dropsAfter !== undefined && (p.sent ?? 0) >= p.dropsAfter) throw new Error('stream reset');
      p.sent = (p.sent ?? 0) + 1;
      const frame = p.forge ? encodeBlock(p.forge(decodeBlock(f))) : f;
      bytes += frame.length;
      onBlock(frame);
    }
    return { blocks: frames.length, bytes };
  }
}

async function openChain(t: ExecutionContext): Promise<Chain> {
  const tmp = tempDir();
  const fx = await openFixtureChain(tmp.dir);
  t.teardown(async () => {
    await fx.db.close();
    tmp.cleanup();
  });
  return fx.chain;
}

/** A source chain of `height` blocks made by the scheduled authorities; block 2 carries a transfer. */
async function sourceChain(t: ExecutionContext, height: number): Promise<Chain> {
  const chain = await openChain(t);
  for (let h = 1; h <= height; h++) {
    const txs = h === 2 ? [transfer(alice, 0n)] : [];
    await chain.commit(await chain.propose(txs, proposerKey(chain.params, h), NOW));
  }
  return chain;
}

interface Follower {
  chain: Chain;
  pool: Mempool;
  admission: TxAdmission;
  net: FakeTransport;
  sync: BlockSync;
  logs: string[];
}

async function follower(t: ExecutionContext): Promise<Follower> {
  const chain = await openChain(t);
  const pool = new Mempool(DEFAULT_MEMPOOL_LIMITS);
  const admission = new TxAdmission(chain, pool);
  admission.now = () => NOW;
  const net = new FakeTransport();
  const logs: string[] = [];
  const log: SyncLog = { info: (_o, m) => logs.push(m), warn: (_o, m) => logs.push(m), debug: () => undefined };
  // The fake implements every member BlockSync uses (SyncTransport); the class type has libp2p's private state besides.
  const sync = new BlockSync(chain, pool, admission, net as unknown as P2PNetwork, log);
  t.teardown(() => sync.stop());
  return { chain, pool, admission, net, sync, logs };
}

const DEADLINE_MS = 60_000;
const reaches = (chain: Chain, height: number) =>
  waitFor(() => chain.height >= height, DEADLINE_MS, `height ${height} (at ${chain.height})`);

/** A source of `height` blocks that claims only `claims`, and a follower synced to the claim. */
async function syncedToClaim(t: ExecutionContext, height: number, claims: number) {
  const source = await sourceChain(t, height);
  const f = await follower(t);
  f.net.connect('peer-a', { chain: source, claims });
  f.sync.poke();
  await reaches(f.chain, claims);
  return { source, f };
}

async function blockAt(chain: Chain, height: number): Promise<Block> {
  const b = await chain.blocks.getBlock(height);
  if (!b) throw new Error(`no block ${height}`);
  return b;
}

/** A gate a fake peer's requests wait at until the test releases it. */
function gated(): { gate: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  return { gate, release };
}

/** A block altered and re-signed by a key that is no authority. */
const forged = (b: Block): Block => reseal({ ...b, timestamp: b.timestamp + 1 }, bob);

test('catches up from a peer ahead: every block imported through the validity rule, pool and counters follow', async (t) => {
  const source = await sourceChain(t, 12);
  const f = await follower(t);
  // The block-2 transfer also reached this node's pool by gossip: importing the block removes it.
  t.is(await f.admission.submit(transfer(alice, 0n)), 'pending');
  f.net.connect('peer-a', { chain: source });
  t.false(f.sync.behind(), 'a claimed head is a hint until the peer proves it');
  f.sync.poke();
  await waitFor(() => f.net.requests.length > 0, DEADLINE_MS, 'the probe');
  t.like(f.net.requests[0], { peer: 'peer-a', from: 12, count: 1 }, 'first the claimed head is probed');
  await reaches(f.chain, 12);
  t.is(f.chain.head.hash, source.head.hash);
  t.is(f.chain.head.state_root, source.head.state_root);
  t.is(f.sync.imported, 12);
  t.is(f.pool.size, 0, 'the transfer left the pool with its block');
  t.false(f.sync.behind());
  t.deepEqual(f.net.penalties, []);
  await waitFor(() => f.logs.includes('synced'), DEADLINE_MS, 'the pass end');
  t.is(f.sync.status().head_height, 12);
});

test('a forged block from one peer: that peer is penalized and dropped, the rest comes from another', async (t) => {
  const source = await sourceChain(t, 10);
  const f = await follower(t);
  // The liar serves the real chain (its head proves itself) but block 6 altered and re-signed by a key
  // that is no authority. The honest peer answers only once the liar was asked for a range.
  const forge = (b: Block) => (b.index === 6 ? forged(b) : b);
  const { gate, release } = gated();
  f.net.connect('liar', { chain: source, forge });
  f.net.connect('honest', { chain: source, gate });
  f.sync.poke();
  await waitFor(() => f.net.requests.some((r) => r.peer === 'liar' && r.from === 1), DEADLINE_MS, 'a range from the liar');
  release();
  await reaches(f.chain, 10);
  t.is(f.chain.head.hash, source.head.hash);
  t.is((await blockAt(f.chain, 6)).hash, (await blockAt(source, 6)).hash, 'the real block 6');
  t.is(f.net.penalties.length, 1);
  t.is(f.net.penalties[0].peer, 'liar');
  t.true(f.net.penalties[0].points > 0);
  t.regex(f.net.penalties[0].reason, /invalid block 6/);
  t.false(f.net.heights.has('liar'), 'the liar is no longer a sync source');
  t.true(
    f.net.requests.some((r) => r.peer === 'honest' && r.from === 6),
    'the pass went on from the forged height with the other peer',
  );
});

test('stops at the target the peer announced and resumes when it announces more', async (t) => {
  const { source, f } = await syncedToClaim(t, 10, 6);
  await waitFor(() => f.logs.includes('synced'), DEADLINE_MS, 'the pass end');
  t.is(f.chain.height, 6);
  t.true(
    f.net.requests.every((r) => r.from + r.count - 1 <= 6),
    'nothing requested past the target',
  );
  t.false(f.sync.behind());

  // A gossiped block of height 8 cannot be judged without 7 (ignored, not relayed), but tells this node
  // the peer moved on: the claim is probed, and the gap fetched.
  const eight = await blockAt(source, 8);
  await t.throwsAsync(f.sync.onGossipBlock(encodeBlock(eight), 'peer-a'), { instanceOf: IgnoredMessage });
  t.is(f.net.heights.get('peer-a'), 8);
  await reaches(f.chain, 8);
  t.is(f.chain.head.hash, eight.hash);

  // The next block by gossip extends the head directly, without a range request.
  const nine = await blockAt(source, 9);
  const requests = f.net.requests.length;
  await f.sync.onGossipBlock(encodeBlock(nine), 'peer-a');
  t.is(f.chain.height, 9);
  t.is(f.net.requests.length, requests);

  // A forged gossiped block is the sender's misbehaviour, and nothing of it is kept.
  const ten = forged(await blockAt(source, 10));
  await t.throwsAsync(f.sync.onGossipBlock(encodeBlock(ten), 'peer-a'), { instanceOf: PeerMisbehaviour });
  t.is(f.chain.height, 9);
});

test('a stopped sync starts no pass; a new one on the same chain resumes where the last one stopped', async (t) => {
  const { source, f } = await syncedToClaim(t, 8, 4);
  await f.sync.stop();
  f.net.connect('peer-a', { chain: source }); // the peer now reports 8
  f.sync.poke();
  t.is(f.net.requests.filter((r) => r.from > 4).length, 0, 'no request after stop');
  t.is(f.chain.height, 4);

  const log: SyncLog = { info: () => undefined, warn: () => undefined, debug: () => undefined };
  const again = new BlockSync(f.chain, f.pool, f.admission, f.net as unknown as P2PNetwork, log);
  t.teardown(() => again.stop());
  again.poke();
  await reaches(f.chain, 8);
  t.is(f.chain.head.hash, source.head.hash);
  t.is(Math.min(...f.net.requests.filter((r) => r.from > 4).map((r) => r.from)), 5, 'resumed from the next height');
});

test('a peer that goes away mid-range is not penalized: its blocks are kept and the rest comes from another', async (t) => {
  const source = await sourceChain(t, 10);
  const f = await follower(t);
  // Five blocks: the probed head, then 1 to 4 of the range. The steady peer answers after that.
  const { gate, release } = gated();
  f.net.connect('flaky', { chain: source, dropsAfter: 5 });
  f.net.connect('steady', { chain: source, gate });
  f.sync.poke();
  await waitFor(() => !f.net.heights.has('flaky'), DEADLINE_MS, 'the flaky peer dropped');
  t.is(f.chain.height, 4);
  release();
  await reaches(f.chain, 10);
  t.is(f.chain.head.hash, source.head.hash);
  t.deepEqual(f.net.penalties, [], 'a dropped stream is no misbehaviour');
  t.false(f.net.heights.has('flaky'), 'not asked again in this pass');
  t.true(
    f.net.requests.some((r) => r.peer === 'steady' && r.from === 5),
    'the blocks it sent were kept',
  );
});

test('a peer claiming a head it does not serve is penalized and never becomes a sync source', async (t) => {
  const source = await sourceChain(t, 3);
  const f = await follower(t);
  f.net.connect('boaster', { chain: source, claims: 9 });
  f.sync.poke();
  await waitFor(() => f.net.penalties.length > 0, DEADLINE_MS, 'the penalty');
  t.like(f.net.penalties[0], { peer: 'boaster', points: FALSE_HEAD_PENALTY });
  t.regex(f.net.penalties[0].reason, /claimed head 9/);
  t.is(f.net.heights.get('boaster'), 0, 'its claim falls back to what this node knows');
  t.false(f.sync.behind());
  t.is(f.chain.height, 0);
  t.deepEqual(
    f.net.requests.map((r) => r.from),
    [9],
    'only the probe: no range asked of it',
  );
});
