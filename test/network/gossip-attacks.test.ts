/**
 * Gossip attacks from outsiders (issue 29, findings 1, 2, 3 and 7) against real node processes: four
 * validators on 127.0.0.1, attacked by libp2p peers built from the node's own stack with fresh keys
 * (helpers/rogue-peer.ts) that hold no stake and no validator key. One network for the whole file; the
 * cases leave it healthy for the next. After each: finality goes on, and no validator ever penalized
 * another (the log scan of helpers/devnet.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RLP } from '@ethereumjs/rlp';
import test, { type ExecutionContext } from 'ava';
import { genesisIdentity, readGenesisFile, PREVOTE, PRECOMMIT, type Vote } from '../../ts/chain/index.js';
import { type ConsensusMessage, decodeConsensusMessage, encodeConsensusMessage } from '../../ts/consensus/index.js';
import { type TestnetNode, generateTestnet } from '../../ts/node/index.js';
import { toHex } from '../../ts/util/index.js';
import {
  type Running,
  assertNoHonestPenalties,
  devnetPeerIds,
  diagnose,
  freeBasePort,
  heights,
  multiaddrOf,
  penaltiesBy,
  startNode,
  stopAll,
} from '../helpers/devnet.js';
import { nestedLists } from '../helpers/hostile-rlp.js';
import { httpJson } from '../helpers/node.js';
import { type RoguePeer, startRoguePeer } from '../helpers/rogue-peer.js';
import { tempDir, waitFor } from '../helpers/util.js';

const CHAIN_ID = 7120;
const BFT_FROM = 5;

let nodes: TestnetNode[] = [];
let running: Running[] = [];
let urls: string[] = [];
let genesis = '';
let cleanup: () => void = () => undefined;

test.before(async (t) => {
  t.timeout(150_000);
  const tmp = tempDir();
  cleanup = tmp.cleanup;
  nodes = generateTestnet({
    validators: 4,
    fullNodes: 0,
    out: join(tmp.dir, 'net'),
    basePort: await freeBasePort(4),
    chainId: CHAIN_ID,
    dposBftHeight: BFT_FROM,
    blockTimeMs: 400,
  });
  urls = nodes.map((n) => n.api_url);
  running = nodes.map((n) => startNode(n));
  try {
    await waitFor(
      async () => (await heights(urls)).every((h) => h >= BFT_FROM + 2),
      120_000,
      'four validators past BFT activation',
    );
  } catch (err) {
    t.log(await diagnose(running));
    throw err;
  }
  const genesisBlock = (await httpJson(`${urls[0]}/chain/blocks/0`)).body.hash as string;
  genesis = genesisIdentity(readGenesisFile(join(dirname(nodes[0].data_dir), 'genesis.json')), genesisBlock);
});

test.afterEach.always(async (t) => {
  if (!t.passed) t.log(await diagnose(running));
});

test.after.always(async () => {
  await stopAll(running);
  cleanup();
});

const minHeight = async (): Promise<number> => Math.min(...(await heights(urls)));

/** Finality goes on: every validator gets `blocks` past the lowest head now. */
async function finalityContinues(blocks: number, what: string): Promise<void> {
  const target = (await minHeight()) + blocks;
  await waitFor(async () => (await minHeight()) >= target, 90_000, `${what}: every validator reaches ${target}`);
}

async function rogue(targets: number[], observe?: Parameters<typeof startRoguePeer>[0]['observe']): Promise<RoguePeer> {
  const r = await startRoguePeer({
    chainId: CHAIN_ID,
    genesisHash: genesis,
    target: targets.map((i) => multiaddrOf(nodes, i)),
    observe,
  });
  await waitFor(
    async () => {
      const lists = await Promise.all(targets.map((i) => httpJson(`${urls[i]}/net/peers`)));
      return lists.every((l) => (l.body.peers as { peer_id: string }[]).some((p) => p.peer_id === r.peerId));
    },
    60_000,
    'the rogue peer passes the handshake',
  );
  // Until it knows the targets' subscriptions, a publish reaches nobody at once and goes out later by
  // IHAVE/IWANT, seconds late: a "future" message would arrive when its height has come.
  const ids = devnetPeerIds(nodes);
  const targetIds = [...ids.keys()].filter((id) => targets.some((i) => ids.get(id) === nodes[i].name));
  await waitFor(
    () => (['tx', 'block', 'consensus'] as const).every((k) => targetIds.every((id) => r.net.subscribers(k).includes(id))),
    30_000,
    'the rogue peer knows the targets subscribe',
  );
  return r;
}

/** The peer ids a validator lists as peers. */
const peersOf = async (i: number): Promise<string[]> =>
  ((await httpJson(`${urls[i]}/net/peers`)).body.peers as { peer_id: string }[]).map((p) => p.peer_id);

/** Every validator still lists the other three. */
async function validatorsConnected(t: ExecutionContext): Promise<void> {
  const ids = [...devnetPeerIds(nodes).keys()];
  await waitFor(
    async () => {
      const lists = await Promise.all(nodes.map((_, i) => peersOf(i)));
      return lists.every((l, i) => ids.filter((_id, j) => j !== i).every((id) => l.includes(id)));
    },
    30_000,
    'every validator lists the other three',
  );
  t.pass('every validator lists the other three');
}

const penalizedBy = (i: number, peer: string): string[] => penaltiesBy(nodes[i]).filter((l) => l.includes(peer));

/** Resident memory of a node process (MiB), from /proc. */
function rssMiB(r: Running): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${r.proc.pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

test.serial(
  '12 harmless peers from 127.0.0.1 connect and leave: the validator still hears gossip, finality continues',
  async (t) => {
    t.timeout(120_000);
    const peers = await Promise.all(Array.from({ length: 12 }, () => rogue([0])));
    await Promise.all(peers.map((p) => p.stop()));
    await waitFor(async () => (await peersOf(0)).length === 3, 30_000, 'node0 is back to its three validators');
    const gossip = async () =>
      Number(/native_p2p_gossip_messages_total (\d+)/.exec((await httpJson(`${urls[0]}/metrics`)).text)?.[1] ?? 0);
    const before = await gossip();
    // node0 decides every height with the others only if it hears their proposals and votes.
    await finalityContinues(6, 'after 12 peers came and went');
    t.true((await gossip()) > before + 10, 'node0 keeps receiving gossip');
    const lag = Math.max(...(await heights(urls))) - (await heights(urls))[0];
    t.true(lag <= 2, `node0 keeps up (${lag} behind)`);
    await validatorsConnected(t);
    assertNoHonestPenalties(t, nodes);
  },
);

test.serial(
  'forged next-height votes and proposals sent to every validator: not relayed, finality continues, nobody banned',
  async (t) => {
    t.timeout(120_000);
    const attacker = await rogue([0, 1, 2, 3]);
    t.teardown(() => attacker.stop());
    const validators = nodes.map((n) => n.validator_address as string);
    const forgedVote = (height: number, round: number, type: Vote['type'], validator: string): ConsensusMessage => ({
      kind: 'vote',
      vote: { type, height, round, block_hash: toHex(randomBytes(32)), validator, signature: toHex(randomBytes(64)) },
    });
    const forgedRef = (height: number, round: number): ConsensusMessage => ({
      kind: 'proposal_ref',
      ref: { height, round, pol_round: -1, block_hash: toHex(randomBytes(32)), signature: toHex(randomBytes(64)) },
    });
    const start = await minHeight();
    let sent = 0;
    const until = Date.now() + 8000;
    while (Date.now() < until) {
      const head = Math.max(...(await heights(urls)));
      const messages: ConsensusMessage[] = [forgedRef(head + 2, 0), forgedRef(head + 6, 0)];
      // head + 1 is the height being decided: forged votes for it would be checked and refused at once.
      for (const h of [head + 2, head + 3, head - 1])
        for (const round of [0, 1])
          for (const type of [PREVOTE, PRECOMMIT] as const)
            for (const v of validators) messages.push(forgedVote(h, round, type, v));
      for (const m of messages) await attacker.net.publishConsensus(encodeConsensusMessage(m));
      sent += messages.length;
      await new Promise((r) => setTimeout(r, 150));
    }
    t.log(`${sent} forged messages sent to every validator`);
    await finalityContinues(5, 'after forged next-height messages');
    t.true((await minHeight()) >= start + 5);
    await validatorsConnected(t);
    // What could not be checked when it came was IGNOREd; one whose height had become the one being decided
    // by the time it was checked was REJECTed: the sender itself may be penalized, never a relay of it.
    const banned = [0, 1, 2, 3].filter((i) => penalizedBy(i, attacker.peerId).length > 0);
    const reasons = banned.map((i) => `node${i}: ${JSON.parse(penalizedBy(i, attacker.peerId)[0]).reason}`);
    t.log(`validators that penalized the sender itself: ${banned.length} ${reasons.join('; ')}`);
    assertNoHonestPenalties(t, nodes);
  },
);

test.serial('non-canonical re-encodings of real votes are refused, their sender penalized, and never relayed', async (t) => {
  t.timeout(120_000);
  let canonical = 0;
  const variantsSeen: string[] = [];
  const observer = await rogue([0, 1, 2, 3], (topic, bytes) => {
    if (topic !== 'consensus') return;
    const again = Buffer.from(encodeConsensusMessage(decodeConsensusMessage(bytes)));
    if (again.equals(bytes)) canonical++;
    else variantsSeen.push(Buffer.from(bytes).toString('utf8'));
  });
  t.teardown(() => observer.stop());
  const peer0 = [...devnetPeerIds(nodes).entries()].find(([, name]) => name === 'node0')?.[0] as string;
  // A real vote, as node0 serves it to a peer catching up with a height.
  const vote = await waitFor(
    async () => {
      const h = (await heights([urls[0]]))[0] + 1;
      const frames = await observer.net.requestConsensus(peer0, h);
      const v = frames.map((f) => decodeConsensusMessage(f)).find((m) => m.kind === 'vote');
      return v?.kind === 'vote' ? v.vote : null;
    },
    30_000,
    'a real vote from node0',
  );
  const { signature, ...unsigned } = vote;
  const json = (o: unknown, space?: number) => Buffer.concat([Buffer.from([2]), Buffer.from(JSON.stringify(o, null, space))]);
  const variants: [string, Uint8Array][] = [
    ['whitespace', json(vote, 1)],
    ['an extra field', json({ ...vote, note: 'x' })],
    ['another key order', json({ signature, ...unsigned })],
  ];
  for (const [what, bytes] of variants) {
    const attacker = await rogue([0]);
    try {
      await attacker.net.publishConsensus(bytes);
      await waitFor(() => penalizedBy(0, attacker.peerId).length > 0, 30_000, `${what}: node0 penalizes the sender`);
      t.regex(penalizedBy(0, attacker.peerId)[0], /non-canonical/, what);
    } finally {
      await attacker.stop();
    }
  }
  await finalityContinues(3, 'after the variants');
  t.true(canonical > 0, `the observer hears the validators' votes (${canonical})`);
  t.deepEqual(variantsSeen, [], 'no validator relayed a variant');
  assertNoHonestPenalties(t, nodes);
});

test.serial('100,000 nested RLP lists on each topic: refused fast, /health stays responsive, memory flat', async (t) => {
  t.timeout(150_000);
  // One shape per case: gossip ids are content hashes, and the same bytes on another topic would be a duplicate.
  const nestedOf = (extra: number) => nestedLists(100_000 + extra);
  const nested = nestedOf(0);
  t.true(nested.length > 370_000 && nested.length < 400_000, `${nested.length} bytes`);
  // An EVM transaction (type 0x02, raw Ethereum bytes in the signature field) whose raw bytes are the nest.
  const evmField = Buffer.concat([Buffer.from([2]), nestedOf(1)]);
  const fields = [randomBytes(32), randomBytes(20), randomBytes(20), 1, 1, 0, '', 1, CHAIN_ID, evmField, new Uint8Array(0)];
  const nestedEvmTx = Buffer.concat([Buffer.from([2]), RLP.encode(fields as never)]);
  const cases: [string, (r: RoguePeer) => Promise<void>][] = [
    ['a transaction batch', (r) => r.net.publishRaw('tx', nested)],
    ['an EVM transaction inside a batch', (r) => r.net.publishRaw('tx', RLP.encode([nestedEvmTx]))],
    ['a block', (r) => r.net.publishRaw('block', nestedOf(2))],
    ['a proposal', (r) => r.net.publishConsensus(Buffer.concat([Buffer.from([1]), nestedOf(3)]))],
  ];
  const target = running[0];
  const rssBefore = rssMiB(target);
  let slowest = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const started = Date.now();
      await httpJson(`${urls[0]}/health`).catch(() => undefined);
      slowest = Math.max(slowest, Date.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    for (const [what, send] of cases) {
      const attacker = await rogue([0]);
      try {
        const sentAt = Date.now();
        await send(attacker);
        await waitFor(() => penalizedBy(0, attacker.peerId).length > 0, 30_000, `${what}: node0 refuses it`);
        t.log(
          `${what}: refused ${Date.now() - sentAt} ms after it was sent: ${JSON.parse(penalizedBy(0, attacker.peerId)[0]).reason}`,
        );
      } finally {
        await attacker.stop();
      }
    }
  } finally {
    polling = false;
    await poller;
  }
  const rssAfter = rssMiB(target);
  t.log(`node0 RSS ${rssBefore.toFixed(0)} -> ${rssAfter.toFixed(0)} MiB; slowest /health ${slowest} ms`);
  // Before: 7-9 s of CPU per message, /health silent 4.5-55 s, RSS 169 MiB -> 3 GB.
  t.true(rssAfter - rssBefore < 150, `RSS grew ${(rssAfter - rssBefore).toFixed(0)} MiB`);
  t.true(slowest < 3000, `/health answered within ${slowest} ms throughout`);
  await finalityContinues(3, 'after the nested messages');
  assertNoHonestPenalties(t, nodes);
});
