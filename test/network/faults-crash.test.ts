/**
 * Crashes at the worst moments, with real node processes on 127.0.0.1 (helpers/fault-network.ts): a
 * validator killed between its prevote and its precommit, and two validators killed locked on blocks no one
 * else saw decided, then a 2+2 partition that heals. Each test has a network of its own.
 */
import test from 'ava';
import { assertAgree, heights, tail } from '../helpers/devnet.js';
import { BFT_FROM, faultTests } from '../helpers/fault-network.js';
import { httpJson } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const faultTest = faultTests(test);
/** PoA heights 1-4, BFT from 5: the crashes happen on live BFT heights after these. */
const PREBUILT = 25;

faultTest(
  'a validator killed between its prevote and its precommit signs nothing conflicting after its restart',
  { prebuilt: PREBUILT, timeoutMs: 240_000 },
  async (t, net) => {
    // Node 2 goes down; nodes 0, 1, 3 run on. Node 1 restarts with a fail point: after its next prevote for a
    // block it stops signing and kills itself, leaving two validators: the height cannot be decided.
    await net.kill(2);
    await net.kill(1, 'SIGTERM');
    const from = (await net.minHeight([0, 3])) + 2;
    const r = net.start(1, [], { NATIVE_FAILPOINT: `after-prevote@${from}` });
    await waitFor(() => r.proc.signalCode === 'SIGKILL', 120_000, 'the fail point fires').catch((err) => {
      t.log(tail(r));
      throw err;
    });
    net.running[1] = null;
    const signed = net.signState(1);
    t.is(signed.step, 2, 'the last thing signed is a prevote');
    t.true(signed.height >= from);
    t.regex(signed.block_hash, /^[0-9a-f]{64}$/);
    // The two left prevote at that height (neither down validator precommitted there): it cannot end.
    const stuck = await net.prevotedAt([0, 3], [1, 2], 60_000, 'the two live validators prevote at one height');
    t.is(stuck, signed.height, 'they are stuck at the height it prevoted at');
    // Restarted (no fail point) with its signature state: it rejoins, the height is decided, and nobody saw
    // two different votes of it at any position.
    net.start(1);
    await net.reach([0, 1, 3], signed.height + 2, 90_000, 'resume after the restart');
    const after = net.signState(1);
    t.true(after.height > signed.height, 'it signs later heights');
    for (const u of net.live([0, 1, 3])) {
      const e = (await httpJson(`${u}/chain/evidence`)).body;
      const against = [...e.pending, ...e.committed].filter(
        (x: { validator: string }) => x.validator === net.nodes[1].validator_address,
      );
      t.deepEqual(against, [], `no double-sign evidence against node1 on ${u}`);
    }
    // Decided with a precommit it signed after the restart (its last signature before was the prevote).
    const decided = await net.signersOf(signed.height);
    t.true(decided.length >= 3);
    t.true(decided.includes(net.nodes[1].validator_address as string), 'node 1 is in the certificate');
    await assertAgree(t, net.live([0, 1, 3]), signed.height + 2, BFT_FROM);
    net.start(2);
    await net.reach([0, 1, 2, 3], signed.height + 4, 90_000, 'all four again');
  },
);

// The partition starts mid-height with one validator on each side locked on a block that no other node saw
// decided, and every validator restarts: the locked blocks must come back with the locks (docs/p2p.md,
// "Restart mid-height"), or the height never ends once the partition heals (rounds run on with nil precommits).
faultTest(
  'a 2+2 partition (static peer lists) halts finality and heals without divergence',
  { prebuilt: PREBUILT, timeoutMs: 300_000 },
  async (t, net) => {
    // Nodes 0 and 2 restart with a fail point: each dies right after its first precommit for a block at a
    // height >= `from` is on disk, before sending it. A height whose block two of them precommitted unseen
    // cannot be decided by the other two: both die locked at one height.
    await Promise.all([net.kill(0, 'SIGTERM'), net.kill(2, 'SIGTERM')]);
    const from = (await net.minHeight([1, 3])) + 2;
    const locked = [0, 2].map((i) => net.start(i, [], { NATIVE_FAILPOINT: `after-lock@${from}` }));
    await waitFor(() => locked.every((r) => r.proc.signalCode === 'SIGKILL'), 150_000, 'both fail points fire');
    net.running[0] = null;
    net.running[2] = null;
    const locks = [0, 2].map((i) => net.signState(i));
    t.log(`locked: ${locks.map((l) => `${l.height}/${l.lock?.round}/${l.lock?.block_hash.slice(0, 8)}`).join(' ')}`);
    t.is(locks[0].height, locks[1].height, 'locked at one height');
    for (const l of locks) {
      t.is(l.step, 3, 'the last thing signed is a precommit');
      t.regex(l.lock?.block_hash ?? '', /^[0-9a-f]{64}$/, 'for a block: a lock');
    }
    const lockedAt = locks[0].height;
    t.true((await net.minHeight([1, 3])) < lockedAt, 'the height they locked at is not decided');

    await Promise.all([net.kill(1, 'SIGTERM'), net.kill(3, 'SIGTERM')]);
    net.startWithPeers(0, [1]);
    net.startWithPeers(1, [0]);
    net.startWithPeers(2, [3]);
    net.startWithPeers(3, [2]);
    await waitFor(async () => (await heights(net.live([0, 1, 2, 3]))).every((h) => h >= 0), 60_000, 'all four answer');
    for (const u of net.live([0, 1, 2, 3]))
      await waitFor(async () => (await httpJson(`${u}/net/peers`)).body.total === 1, 60_000, `${u}: one peer, on its side`);
    // Each side holds half the voting power: every validator prevotes at the locked height, and it does not
    // end on either side (the certificate that ends it after the heal needs both sides: below).
    const split = await net.prevotedAt([0, 1, 2, 3], [], 60_000, 'every validator prevotes in the partition');
    t.log(`partitioned at ${split}`);
    t.is(split, lockedAt, 'nothing decided in the partition');
    await assertAgree(t, net.live([0, 1, 2, 3]), split - 1, BFT_FROM);
    const top = split - 1;
    // Heal: one side restarts with every peer listed and dials the other side.
    await Promise.all([net.kill(0, 'SIGTERM'), net.kill(1, 'SIGTERM')]);
    net.start(0);
    net.start(1);
    await net.reach([0, 1, 2, 3], top + 3, 120_000, 'finality resumes after the partition heals');
    await assertAgree(t, net.live([0, 1, 2, 3]), top + 3, BFT_FROM);
    // The height decided after the heal is one of the locked blocks: every quorum includes node 0 or node 2,
    // which prevote only for their locked block or for one with a prevote quorum in a round at least as late
    // (only the locked blocks ever had one).
    const decided = (await httpJson(`${net.urls[0]}/chain/blocks/${lockedAt}`)).body.hash as string;
    t.true(
      locks.some((l) => l.lock?.block_hash === decided),
      `height ${lockedAt} decided ${decided}, a block one of them was locked on`,
    );
    // Its certificate holds precommits of both sides (a side has two of the four validators).
    const signers = await net.signersOf(lockedAt);
    const side = (i: number[]) => signers.filter((s) => i.some((k) => net.nodes[k].validator_address === s)).length;
    t.true(side([0, 1]) >= 1 && side([2, 3]) >= 1, `signers ${signers.join(' ')}`);
  },
);
