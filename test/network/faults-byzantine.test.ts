/**
 * Byzantine inputs, with real node processes on 127.0.0.1 (helpers/fault-network.ts): malformed, oversized
 * and invalid messages and blocks from an outsider, and conflicting votes signed with a stolen validator key
 * becoming evidence that slashes and tombstones the validator. Each test has a network of its own.
 */
import test from 'ava';
import { PREVOTE, type Vote, voteDigest } from '../../ts/chain/index.js';
import { encodeConsensusMessage } from '../../ts/consensus/index.js';
import { signDigest } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { type Running, assertAgree, height, heights, multiaddrOf, tail } from '../helpers/devnet.js';
import { CHAIN_ID, faultTests } from '../helpers/fault-network.js';
import { httpJson } from '../helpers/node.js';
import { validatorKeyOf } from '../helpers/prebuilt-chain.js';
import { type RoguePeer, fetchBlock, forgeChild, startRoguePeer } from '../helpers/rogue-peer.js';
import { waitFor } from '../helpers/util.js';

const faultTest = faultTests(test);
/** PoA heights 1-4, BFT from 5: the attacks happen on live BFT heights after these. */
const PREBUILT = 25;

faultTest(
  'malformed, oversized and invalid messages and blocks get their sender dropped and change nothing',
  { prebuilt: PREBUILT, timeoutMs: 240_000 },
  async (t, net) => {
    const { urls, nodes, running } = net;
    // Two validators down: the other two cannot finalize, so any block that got in would show as a new head.
    await Promise.all([net.kill(2), net.kill(3)]);
    await net.prevotedAt([0, 1], [2, 3], 60_000, 'the two live validators prevote at one height');
    const genesis = await net.networkId();
    const before = await heights(net.live([0, 1]));
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
      const rogue = await startRoguePeer({ chainId: CHAIN_ID, genesisHash: genesis, target: multiaddrOf(nodes, 0) });
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
    t.deepEqual(await heights(net.live([0, 1])), before, 'nothing was finalized or imported');
    const metrics = (await httpJson(`${urls[0]}/metrics`)).text;
    const invalid = Number(/native_p2p_invalid_messages_total (\d+)/.exec(metrics)?.[1]);
    t.true(invalid >= kinds.length, `invalid messages counted: ${invalid}`);
  },
);

faultTest(
  'conflicting votes become evidence: gossiped, included once, the same on every node; the validator is slashed and tombstoned',
  { prebuilt: PREBUILT, timeoutMs: 180_000 },
  async (t, net) => {
    const { urls, nodes, running } = net;
    const genesis = await net.networkId();
    const rogue = await startRoguePeer({ chainId: CHAIN_ID, genesisHash: genesis, target: multiaddrOf(nodes, 0) });
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
    await net.reach([0, 1, 2, 3], ev.included_at, 30_000, 'every node has the block with the evidence');
    const blocks = await Promise.all(
      net.live([0, 1, 2, 3]).map(async (u) => (await httpJson(`${u}/chain/blocks/${ev.included_at}`)).body),
    );
    for (const b of blocks) t.deepEqual(b, blocks[0]);
    t.true(blocks[0].evidence.some((x: { id: string }) => x.id === ev.id));
    // Every item seen is included exactly once (the real node 3's own votes conflict with the forged ones
    // too), and the pools empty out.
    for (const u of net.live([0, 1, 2, 3])) {
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
    const top = await net.minHeight([0, 1, 2, 3]);
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
    for (const u of net.live([0, 1, 2, 3])) {
      const v = ((await httpJson(`${u}/staking/validators`)).body.validators as { address: string; status: string }[]).find(
        (x) => x.address === key.address,
      );
      t.is(v?.status, 'tombstoned', u);
    }
    // Three validators are fewer than BFT needs (4): the chain goes on as DPoS, each block final when made.
    const after2 = (await net.minHeight([0, 1, 2])) + 3;
    await net.reach([0, 1, 2, 3], after2, 60_000, 'the chain goes on without the tombstoned validator');
    await assertAgree(t, net.live([0, 1, 2, 3]), after2, Number.POSITIVE_INFINITY);
    t.is((await httpJson(`${urls[0]}/chain/blocks/${after2}`)).body.consensus, 'DPoS');
  },
);
