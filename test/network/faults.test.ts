/**
 * The network's fault tests, with real node processes on 127.0.0.1 (the testnet generator's network,
 * each node started with its nodes.json command): 4 validators and one full node, 200 ms blocks, BFT
 * from height 5. The first 500 blocks are made by the validators' keys in the test process
 * (helpers/prebuilt-chain.ts) so a late full node has real blocks to sync without minutes of waiting;
 * everything after that is the live network. The steps run in order on one network.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { ethers } from 'ethers';
import { genesisIdentity, readGenesisFile, PREVOTE, type Vote, voteDigest } from '../../ts/chain/index.js';
import { encodeConsensusMessage } from '../../ts/consensus/index.js';
import { signDigest, signTransaction } from '../../ts/ledger/index.js';
import { type TestnetNode, generateTestnet } from '../../ts/node/index.js';
import { toHex } from '../../ts/util/index.js';
import {
  type Running,
  assertAgree,
  assertNoHonestPenalties,
  diagnose,
  exited,
  freeBasePort,
  height,
  heights,
  stableHeights,
  startNode,
  stopAll,
  stopNode,
  tail,
} from '../helpers/devnet.js';
import { devKey, rpcOk } from '../helpers/evm.js';
import { httpJson } from '../helpers/node.js';
import { type Prebuilt, prebuildChain, validatorKeyOf } from '../helpers/prebuilt-chain.js';
import { type RoguePeer, fetchBlock, forgeChild, startRoguePeer } from '../helpers/rogue-peer.js';
import { WaitAborted, tempDir, waitFor } from '../helpers/util.js';

const CHAIN_ID = 7120;
const BFT_FROM = 5;
const PREBUILT = 500;

let nodes: TestnetNode[] = [];
let running: (Running | null)[] = [];
let urls: string[] = [];
let prebuilt: Prebuilt;
let cleanup: () => void = () => undefined;

const live = (idx: number[]) => idx.map((i) => urls[i]);
const minHeight = async (idx: number[]) => Math.min(...(await heights(live(idx))));
const start = (i: number, extra: string[] = [], env: NodeJS.ProcessEnv = {}) => {
  running[i] = startNode(nodes[i], extra, env);
};
const kill = async (i: number, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL') => {
  const r = running[i];
  if (r) await stopNode(r, signal);
  running[i] = null;
};

/**
 * Wait until every listed node reaches a height. A listed node whose process ended fails the wait at once
 * (a crash is not a slow network); the failure's diagnostics come from the afterEach hook.
 */
async function reach(_t: ExecutionContext, idx: number[], h: number, ms: number, what: string): Promise<void> {
  await waitFor(
    async () => {
      const down = idx.filter((i) => running[i] && exited(running[i] as Running));
      if (down.length > 0) throw new NodeExited(`node${down.join(', node')} exited while waiting for ${what}`);
      return (await heights(live(idx))).every((x) => x >= h);
    },
    ms,
    what,
  );
}

/** A wait's node crashed: waitFor rethrows this at once instead of polling to its deadline. */
class NodeExited extends WaitAborted {}

/** Multiaddr of node i (from the other nodes' --peers lists, which nodes.json's start commands carry). */
function multiaddrOf(i: number): string {
  const other = nodes[(i + 1) % 4];
  const peers = other.start.split(' ')[other.start.split(' ').indexOf('--peers') + 1].split(',');
  return peers.find((p) => p.includes(`/tcp/${nodes[i].p2p_port}/`)) as string;
}

/** Node i's start command with another static peer list. */
function withPeers(i: number, peers: number[]): TestnetNode {
  const argv = nodes[i].start.split(' ');
  argv[argv.indexOf('--peers') + 1] = peers.map(multiaddrOf).join(',');
  return { ...nodes[i], start: argv.join(' ') };
}

/** The network identity peers must share (genesis block and parameters). */
async function networkId(): Promise<string> {
  const genesisBlock = (await httpJson(`${urls[0]}/chain/blocks/0`)).body.hash as string;
  return genesisIdentity(readGenesisFile(join(dirname(nodes[0].data_dir), 'genesis.json')), genesisBlock);
}

const privState = (i: number) =>
  JSON.parse(readFileSync(join(nodes[i].data_dir, 'priv_validator_state.json'), 'utf8')) as {
    height: number;
    round: number;
    step: number;
    block_hash: string;
    lock?: { round: number; block_hash: string };
  };

test.before(async (t) => {
  t.timeout(180_000);
  const tmp = tempDir();
  cleanup = tmp.cleanup;
  const base = await freeBasePort(5);
  nodes = generateTestnet({
    validators: 4,
    fullNodes: 1,
    out: join(tmp.dir, 'net'),
    basePort: base,
    chainId: CHAIN_ID,
    dposBftHeight: BFT_FROM,
    blockTimeMs: 200,
  });
  urls = nodes.map((n) => n.api_url);
  prebuilt = await prebuildChain(nodes, PREBUILT);
  running = [0, 1, 2, 3].map((i) => startNode(nodes[i]));
  running.push(null);
  try {
    await reach(t, [0, 1, 2, 3], PREBUILT + 3, 150_000, 'the live network extends the prebuilt chain');
  } catch (err) {
    t.log(await diagnose(running));
    throw err;
  }
});

// A failed step prints every node's height, round, step and peers and the tail of its log, so a CI
// failure can be diagnosed from the CI output alone.
test.afterEach.always(async (t) => {
  if (!t.passed) t.log(await diagnose(running));
});

test.after.always(async () => {
  await stopAll(running.filter((r): r is Running => r !== null));
  cleanup();
});

// Every step's misbehaving peers are outsiders: whatever the faults, no node ever penalized another (their
// penalty lines, scanned from every node's log across restarts; docs/p2p.md).
test.afterEach('no node of the network penalized another', (t) => {
  assertNoHonestPenalties(t, nodes);
});

test.serial(
  'four validators finalize: one hash per height on every node, certificates on BFT heights, transactions relayed',
  async (t) => {
    t.timeout(120_000);
    const h = await minHeight([0, 1, 2, 3]);
    await assertAgree(t, live([0, 1, 2, 3]), h, BFT_FROM);
    const poa = (await httpJson(`${urls[0]}/chain/blocks/3`)).body;
    t.is(poa.consensus, 'PoA');
    t.false(poa.has_justification);
    const bft = (await httpJson(`${urls[0]}/chain/blocks/${h}`)).body;
    t.is(bft.consensus, 'DPoS+BFT');
    t.true(bft.has_justification);
    t.deepEqual(bft.evidence, []);
    // The signers of a certificate come from the next block, the same on every node.
    const signers = await Promise.all(
      live([0, 1, 2, 3]).map(async (u) => (await httpJson(`${u}/chain/blocks/${h - 1}/signers`)).body),
    );
    t.is(signers[0].source, 'last_commit');
    t.true(signers[0].signers.length >= 3);
    for (const s of signers) t.deepEqual(s, signers[0]);
    await waitFor(async () => (await httpJson(`${urls[0]}/net/peers`)).body.total === 3, 60_000, 'three peers');
    t.is(await rpcOk(urls[0], 'net_peerCount'), '0x3');

    const status = await rpcOk(urls[0], 'native_getBftStatus');
    t.is(status.consensus, 'DPoS+BFT');
    t.is(typeof status.current_view, 'number');
    t.true(status.current_view > h);
    t.regex(status.current_leader, /^0x[0-9a-f]{40}$/);
    const fin = await rpcOk(urls[0], 'native_getFinalizedHeight');
    t.is(fin.blocks_behind_finality, 0);
    const finalized = await rpcOk(urls[0], 'eth_getBlockByNumber', ['finalized', false]);
    t.true(Number(finalized.number) >= h);
    const ns = (await httpJson(`${urls[0]}/native_status`)).body;
    t.is(ns.consensus_state.phase, 'DPoS+BFT');
    t.true(ns.consensus_state.validator);
    t.is(ns.sync_info.peers, 3);
    t.false(ns.sync_info.catching_up);
    const metrics = (await httpJson(`${urls[0]}/metrics`)).text;
    for (const m of ['native_p2p_peers 3', 'native_bft_round ', 'native_finality_lag_blocks 0', 'native_sync_catching_up 0'])
      t.true(metrics.includes(m), m);

    // A transfer submitted to one validator is gossiped, included, and seen by all.
    const [alice, bob] = [devKey(0), devKey(1)];
    const nonce = BigInt(prebuilt.transfers);
    const tx = signTransaction(
      { from: alice.address, to: bob.address, amount: 777n, fee: 10_000n, nonce, chain_id: CHAIN_ID },
      alice,
    );
    const sent = await httpJson(`${urls[1]}/transactions`, { method: 'POST', json: { transaction: tx } });
    t.is(sent.status, 200, sent.text);
    await waitFor(
      async () => {
        const r = await Promise.all(live([0, 1, 2, 3]).map((u) => httpJson(`${u}/transactions/${tx.txid}`)));
        return r.every((x) => x.status === 200 && x.body.status === 'confirmed');
      },
      60_000,
      'transfer confirmed on all validators',
    );
  },
);

test.serial('one validator killed: the other three keep finalizing; restarted, it catches up and follows', async (t) => {
  t.timeout(120_000);
  await kill(2);
  const h1 = await minHeight([0, 1, 3]);
  await reach(t, [0, 1, 3], h1 + 5, 60_000, 'progress with 3 of 4');
  start(2);
  const target = await minHeight([0, 1, 3]);
  await reach(t, [2], target + 2, 90_000, 'the restarted validator catches up and follows');
  await reach(t, [0, 1, 3], target + 2, 30_000, 'the others keep going');
  await assertAgree(t, live([0, 1, 2, 3]), target + 2, BFT_FROM);
});

let halted = 0;

test.serial('two validators killed: no block is finalized and nothing diverges', async (t) => {
  t.timeout(120_000);
  await Promise.all([kill(2), kill(3)]);
  const [a, b] = await stableHeights(live([0, 1]), 3000, 60_000);
  t.true(Math.abs(a - b) <= 1, `${a} ${b}`);
  halted = Math.max(a, b);
  await new Promise((r) => setTimeout(r, 2000));
  t.deepEqual(await heights(live([0, 1])), [a, b], 'no block finalized without 3/4 of the voting power');
  await assertAgree(t, live([0, 1]), Math.min(a, b), BFT_FROM);
});

test.serial('malformed, oversized and invalid messages and blocks get their sender dropped and change nothing', async (t) => {
  t.timeout(180_000);
  const genesis = await networkId();
  const before = await heights(live([0, 1]));
  const parentHeight = before[0];
  const keys = [0, 1, 2, 3].map((i) => validatorKeyOf(nodes[i]));
  const sorted = [...keys].sort((x, y) => (x.address < y.address ? -1 : 1));
  const proposer = sorted[(parentHeight + 1) % 4];
  const voters = keys.filter((k) => k !== proposer);
  const peer0 = (await httpJson(`${urls[0]}/net/peers`)).body.peer_id as string;
  const junk = (n: number) => new Uint8Array(Array.from({ length: n }, (_, i) => (i * 7919) % 256));
  const kinds: [string, (r: RoguePeer) => Promise<void>][] = [
    ['an undecodable transaction', async (r) => r.net.publishTransaction(junk(120))],
    ['a malformed consensus message', (r) => r.net.publishConsensus(Buffer.from('\x02{"type": 1, "height": "x"'))],
    ['an oversized message', (r) => r.net.publishConsensus(Buffer.concat([Buffer.from([1]), junk(1_500_000)]))],
    [
      'a vote with a forged signature',
      (r) => {
        const body = { type: PREVOTE, height: parentHeight + 1, round: 0, block_hash: 'cc'.repeat(32) } as const;
        const vote = { ...body, validator: keys[2].address, signature: toHex(junk(64)) };
        return r.net.publishConsensus(encodeConsensusMessage({ kind: 'vote', vote }));
      },
    ],
    ['undecodable evidence', (r) => r.net.publishEvidence(junk(90))],
    [
      'a block with a bad proposer signature',
      async (r) =>
        r.net.publishBlock(
          forgeChild(CHAIN_ID, await fetchBlock(r, peer0, parentHeight), proposer, voters, { badSignature: true }),
        ),
    ],
    [
      'a block with a wrong state root',
      async (r) =>
        r.net.publishBlock(
          forgeChild(CHAIN_ID, await fetchBlock(r, peer0, parentHeight), proposer, voters, { stateRoot: 'ab'.repeat(32) }),
        ),
    ],
  ];
  for (const [what, send] of kinds) {
    const rogue = await startRoguePeer({ chainId: CHAIN_ID, genesisHash: genesis, target: multiaddrOf(0) });
    try {
      const listed = async () =>
        ((await httpJson(`${urls[0]}/net/peers`)).body.peers as { peer_id: string }[]).some((p) => p.peer_id === rogue.peerId);
      await waitFor(listed, 30_000, `${what}: the peer passes the handshake`);
      await waitFor(
        async () => {
          if (!(await listed()) && rogue.net.peers().length === 0) return true;
          await send(rogue).catch(() => undefined);
          return false;
        },
        30_000,
        `${what}: the sender is dropped`,
      );
      await waitFor(
        () => (running[0] as Running).logs.join('').includes(rogue.peerId),
        10_000,
        `${what}: node0 logs the misbehaving peer`,
      );
    } finally {
      await rogue.stop();
    }
  }
  t.deepEqual(await heights(live([0, 1])), before, 'nothing was finalized or imported');
  const metrics = (await httpJson(`${urls[0]}/metrics`)).text;
  const invalid = Number(/native_p2p_invalid_messages_total (\d+)/.exec(metrics)?.[1]);
  t.true(invalid >= kinds.length, `invalid messages counted: ${invalid}`);
});

test.serial('finalization resumes when one of the two returns', async (t) => {
  t.timeout(120_000);
  start(3);
  await reach(t, [0, 1, 3], halted + 3, 90_000, 'resume with 3 of 4');
  await assertAgree(t, live([0, 1, 3]), halted + 3, BFT_FROM);
});

test.serial('a validator killed between its prevote and its precommit signs nothing conflicting after its restart', async (t) => {
  t.timeout(180_000);
  // Nodes 0, 1, 3 run (node 2 is down). Node 1 restarts with a fail point: after its next prevote for a
  // block it stops signing and kills itself, leaving two validators: the height cannot be decided.
  await kill(1, 'SIGTERM');
  const from = (await minHeight([0, 3])) + 2;
  start(1, [], { NATIVE_FAILPOINT: `after-prevote@${from}` });
  const r = running[1] as Running;
  await waitFor(() => r.proc.signalCode === 'SIGKILL', 120_000, 'the fail point fires').catch((err) => {
    t.log(tail(r));
    throw err;
  });
  running[1] = null;
  const signed = privState(1);
  t.is(signed.step, 2, 'the last thing signed is a prevote');
  t.true(signed.height >= from);
  t.regex(signed.block_hash, /^[0-9a-f]{64}$/);
  const stuck = await stableHeights(live([0, 3]), 3000, 60_000);
  t.true(Math.max(...stuck) < signed.height, 'the height it prevoted at is not decided without it');
  // Restarted (no fail point) with its signature state: it rejoins, the height is decided, and nobody saw
  // two different votes of it at any position.
  start(1);
  await reach(t, [0, 1, 3], signed.height + 2, 90_000, 'resume after the restart');
  const after = privState(1);
  t.true(after.height > signed.height, 'it signs later heights');
  for (const u of live([0, 1, 3])) {
    const e = (await httpJson(`${u}/chain/evidence`)).body;
    const against = [...e.pending, ...e.committed].filter(
      (x: { validator: string }) => x.validator === nodes[1].validator_address,
    );
    t.deepEqual(against, [], `no double-sign evidence against node1 on ${u}`);
  }
  const decided = (await httpJson(`${urls[0]}/chain/blocks/${signed.height}/signers`)).body;
  t.true(decided.signers.length >= 3);
  await assertAgree(t, live([0, 1, 3]), signed.height + 2, BFT_FROM);
  start(2);
  await reach(t, [0, 1, 2, 3], signed.height + 4, 90_000, 'all four again');
});

// The partition starts mid-height with one validator on each side locked on a block that no other node saw
// decided, and every validator restarts: the locked blocks must come back with the locks (docs/p2p.md,
// "Restart mid-height"), or the height never ends once the partition heals (rounds run on with nil precommits).
test.serial('a 2+2 partition (static peer lists) halts finality and heals without divergence', async (t) => {
  t.timeout(300_000);
  // Nodes 0 and 2 restart with a fail point: each dies right after its first precommit for a block at a
  // height >= `from` is on disk, before sending it. A height whose block two of them precommitted unseen
  // cannot be decided by the other two: both die locked at one height.
  await Promise.all([kill(0, 'SIGTERM'), kill(2, 'SIGTERM')]);
  const from = (await minHeight([1, 3])) + 2;
  for (const i of [0, 2]) start(i, [], { NATIVE_FAILPOINT: `after-lock@${from}` });
  const locked = [0, 2].map((i) => running[i] as Running);
  await waitFor(() => locked.every((r) => r.proc.signalCode === 'SIGKILL'), 150_000, 'both fail points fire');
  running[0] = null;
  running[2] = null;
  const locks = [0, 2].map(privState);
  t.log(`locked: ${locks.map((l) => `${l.height}/${l.lock?.round}/${l.lock?.block_hash.slice(0, 8)}`).join(' ')}`);
  t.is(locks[0].height, locks[1].height, 'locked at one height');
  for (const l of locks) {
    t.is(l.step, 3, 'the last thing signed is a precommit');
    t.regex(l.lock?.block_hash ?? '', /^[0-9a-f]{64}$/, 'for a block: a lock');
  }
  const lockedAt = locks[0].height;
  t.true((await minHeight([1, 3])) < lockedAt, 'the height they locked at is not decided');

  await Promise.all([kill(1, 'SIGTERM'), kill(3, 'SIGTERM')]);
  running[0] = startNode(withPeers(0, [1]));
  running[1] = startNode(withPeers(1, [0]));
  running[2] = startNode(withPeers(2, [3]));
  running[3] = startNode(withPeers(3, [2]));
  await waitFor(async () => (await heights(live([0, 1, 2, 3]))).every((h) => h >= 0), 60_000, 'all four answer');
  for (const u of live([0, 1, 2, 3]))
    await waitFor(async () => (await httpJson(`${u}/net/peers`)).body.total === 1, 60_000, `${u}: one peer, on its side`);
  // Each side holds half the voting power: nothing is finalized, on either side, however long it waits.
  const split = await stableHeights(live([0, 1, 2, 3]), 5000, 60_000);
  t.log(`partitioned at ${split.join(' ')}`);
  t.true(Math.max(...split) < lockedAt, 'nothing decided in the partition');
  await assertAgree(t, live([0, 1, 2, 3]), Math.min(...split), BFT_FROM);
  const top = Math.max(...split);
  // Heal: one side restarts with every peer listed and dials the other side.
  await Promise.all([kill(0, 'SIGTERM'), kill(1, 'SIGTERM')]);
  start(0);
  start(1);
  await reach(t, [0, 1, 2, 3], top + 3, 120_000, 'finality resumes after the partition heals');
  await assertAgree(t, live([0, 1, 2, 3]), top + 3, BFT_FROM);
  // The height decided after the heal is one of the locked blocks: every quorum includes node 0 or node 2,
  // which prevote only for their locked block or for one with a prevote quorum in a round at least as late
  // (only the locked blocks ever had one).
  const decided = (await httpJson(`${urls[0]}/chain/blocks/${lockedAt}`)).body.hash as string;
  t.true(
    locks.some((l) => l.lock?.block_hash === decided),
    `height ${lockedAt} decided ${decided}, a block one of them was locked on`,
  );
});

test.serial('a full node started from zero after 500 blocks syncs to the head and answers like a validator', async (t) => {
  t.timeout(180_000);
  const target = await height(urls[0]);
  t.true(target >= PREBUILT);
  start(4);
  await reach(t, [4], target, 150_000, 'the full node syncs');
  await waitFor(async () => !(await httpJson(`${urls[4]}/native_status`)).body.sync_info.catching_up, 30_000, 'caught up');
  const ns = (await httpJson(`${urls[4]}/native_status`)).body;
  t.false(ns.consensus_state.validator);
  t.true(ns.sync_info.blocks_imported >= target);
  for (const h of [1, 4, 20, 21, 250, PREBUILT, target]) {
    const [v, f] = await Promise.all([urls[0], urls[4]].map(async (u) => (await httpJson(`${u}/chain/blocks/${h}`)).body));
    t.deepEqual(f, v, `/chain/blocks/${h}`);
  }
  const token = prebuilt.token;
  for (const who of [devKey(0).address, devKey(1).address, devKey(2).address, token]) {
    const [v, f] = await Promise.all([urls[0], urls[4]].map((u) => rpcOk(u, 'eth_getBalance', [who, 'latest'])));
    t.is(f, v, `eth_getBalance ${who}`);
  }
  const filter = { fromBlock: '0x0', toBlock: ethers.toQuantity(PREBUILT), address: token };
  const [vLogs, fLogs] = await Promise.all([urls[0], urls[4]].map((u) => rpcOk(u, 'eth_getLogs', [filter])));
  t.is(vLogs.length, 2, 'the Token constructor and a transfer logged Transfer');
  t.deepEqual(fLogs, vLogs);
  const v = (await httpJson(`${urls[4]}/chain/validate`)).body;
  t.true(v.valid, v.error ?? '');
  // It follows the head afterwards, and a write sent to it reaches the validators.
  const [alice, bob] = [devKey(0), devKey(1)];
  const nonce = BigInt(prebuilt.transfers + 1);
  const tx = signTransaction(
    { from: alice.address, to: bob.address, amount: 1n, fee: 10_000n, nonce, chain_id: CHAIN_ID },
    alice,
  );
  t.is((await httpJson(`${urls[4]}/transactions`, { method: 'POST', json: { transaction: tx } })).status, 200);
  await waitFor(
    async () => (await httpJson(`${urls[4]}/transactions/${tx.txid}`)).body.status === 'confirmed',
    60_000,
    'a transfer sent to the full node is included',
  );
});

test.serial(
  'conflicting votes become evidence: gossiped, included once, the same on every node; the validator is slashed and tombstoned',
  async (t) => {
    t.timeout(120_000);
    const genesis = await networkId();
    const rogue = await startRoguePeer({ chainId: CHAIN_ID, genesisHash: genesis, target: multiaddrOf(0) });
    t.teardown(() => rogue.stop());
    // Node 3's validator key, stolen: two prevotes for different blocks at one (height, round).
    const key = validatorKeyOf(nodes[3]);
    const vote = (h: number, hash: string): Vote => {
      const body = { type: PREVOTE, height: h, round: 0, block_hash: hash } as const;
      return { ...body, validator: key.address, signature: toHex(signDigest(voteDigest(CHAIN_ID, body), key.privateKey)) };
    };
    const committed = await waitFor(
      async () => {
        const e = (await httpJson(`${urls[0]}/chain/evidence`)).body;
        if (e.committed.length > 0) return e.committed;
        const h = (await height(urls[0])) + 1;
        for (const x of [h, h + 1]) {
          for (const hash of ['aa'.repeat(32), 'bb'.repeat(32)])
            await rogue.net.publishConsensus(encodeConsensusMessage({ kind: 'vote', vote: vote(x, hash) }));
        }
        return null;
      },
      90_000,
      'evidence included in a block',
    ).catch(async (err) => {
      t.log(JSON.stringify((await httpJson(`${urls[0]}/chain/evidence`)).body), tail(running[0] as Running, 60));
      throw err;
    });
    await rogue.stop();
    const ev = committed[0];
    t.is(ev.validator, key.address);
    t.is(ev.type, 1);
    await reach(t, [0, 1, 2, 3], ev.included_at, 30_000, 'every node has the block with the evidence');
    const blocks = await Promise.all(
      live([0, 1, 2, 3]).map(async (u) => (await httpJson(`${u}/chain/blocks/${ev.included_at}`)).body),
    );
    for (const b of blocks) t.deepEqual(b, blocks[0]);
    t.true(blocks[0].evidence.some((x: { id: string }) => x.id === ev.id));
    // Every item seen is included exactly once (the real node 3's own votes conflict with the forged ones
    // too), and the pools empty out.
    for (const u of live([0, 1, 2, 3])) {
      const e = await waitFor(
        async () => {
          const body = (await httpJson(`${u}/chain/evidence`)).body;
          return body.pending.length === 0 ? body : null;
        },
        60_000,
        `${u}: the evidence pool empties into blocks`,
      );
      const ids = e.committed.map((x: { id: string }) => x.id);
      t.is(new Set(ids).size, ids.length, `${u}: no evidence included twice`);
      t.true(ids.includes(ev.id));
    }
    const top = await minHeight([0, 1, 2, 3]);
    const seen = new Map<string, number>();
    for (let h = ev.included_at - 5; h <= top; h++) {
      // Version-1 blocks (DPoS without BFT, once the tombstoned validator left the set) carry no evidence.
      for (const x of ((await httpJson(`${urls[0]}/chain/blocks/${h}`)).body.evidence ?? []) as { id: string }[]) {
        t.false(seen.has(x.id), `${x.id} included at ${seen.get(x.id)} and again at ${h}`);
        seen.set(x.id, h);
      }
    }
    // Applied through the staking module's double-sign hook: slashed, tombstoned, out of the active set,
    // the same on every node; the other three go on making blocks.
    for (const u of live([0, 1, 2, 3])) {
      const v = ((await httpJson(`${u}/staking/validators`)).body.validators as { address: string; status: string }[]).find(
        (x) => x.address === key.address,
      );
      t.is(v?.status, 'tombstoned', u);
    }
    // Three validators are fewer than BFT needs (4): the chain goes on as DPoS, each block final when made.
    const after2 = (await minHeight([0, 1, 2])) + 3;
    await reach(t, [0, 1, 2, 3], after2, 60_000, 'the chain goes on without the tombstoned validator');
    await assertAgree(t, live([0, 1, 2, 3, 4]), after2, Number.POSITIVE_INFINITY);
    t.is((await httpJson(`${urls[0]}/chain/blocks/${after2}`)).body.consensus, 'DPoS');
  },
);
