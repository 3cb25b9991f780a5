/**
 * State sync under faults, with real processes (issue 25; docs/p2p.md, "State sync", "Fault tests"): one devnet of
 * four validators taking a snapshot every few blocks, cut into many small chunks; in each case a fresh full node
 * joins with --state-sync from the peers the case lists, among them misbehaving snapshot peers that are
 * processes of their own (helpers/snapshot-fault-peer.ts): one serving corrupt chunks, two pairs offering a
 * forged snapshot, one disappearing mid-transfer, and peers that hold chunk requests so the joining node can be
 * killed mid-restore or see its snapshot pruned by its peers while it fetches it. Every join ends with the
 * validators' state (eth_getBalance at the head) and none ever answers a state read before it is complete.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { TestnetNode } from '../../ts/node/index.js';
import { penaltiesBy, stopNode } from '../helpers/devnet.js';
import { SNAPSHOT_INTERVAL, StateSyncNet, logLines } from '../helpers/state-sync-net.js';
import { waitFor } from '../helpers/util.js';

let net: StateSyncNet;

test.before(async (t) => {
  t.timeout(240_000);
  net = await StateSyncNet.start();
});

test.after.always(async () => {
  await net?.stop();
});

/** The penalty lines a joining node logged against a peer (as parsed JSON). */
const penalties = (node: TestnetNode, peer: string) =>
  penaltiesBy(node)
    .map((l) => JSON.parse(l) as { peer: string; reason: string })
    .filter((p) => p.peer === peer);

// Each joining node starts with peers among which only one honest (a validator) or none: the two-peer rule then
// puts a fault peer into every snapshot it can choose, whatever peer connects first. A second honest peer, where a
// case needs one, is a plain snapshot server (fault 'none') started once the fault has played out.

const honestId = (v: number): string => net.addr(v).split('/p2p/')[1];

test.serial(
  'a peer serving corrupt chunks is scored down, its chunks come from the honest peer, the join completes',
  async (t) => {
    t.timeout(240_000);
    const bad = await net.faultPeer(t, 'corrupt');
    const joiner = net.joiner(t, [bad.addr, net.addr(0)]);
    const done = await net.joined(t, joiner);
    t.true(bad.count('corrupt-chunk') > 0, 'the corrupt peer was asked for chunks');
    const against = penalties(joiner.node, bad.peerId);
    t.is(against.length, 1, 'the corrupt peer is penalized, once');
    t.regex(against[0].reason, /snapshot chunk \d+ is invalid/);
    t.deepEqual(penalties(joiner.node, honestId(0)), [], 'the honest peer is not penalized');
    t.true(done.earliest % SNAPSHOT_INTERVAL === 0, `joined at a snapshot height (${done.earliest})`);
    await net.assertSameBalance(t, joiner.node, done.latest);
  },
);

test.serial(
  "forged snapshots (a root that is not the block's, a manifest that does not hash to it) are refused, their peers penalized; no state is served until an honest one is offered",
  async (t) => {
    t.timeout(240_000);
    // A pair offering a snapshot of block H+1 whose state root is not the block's: refused at the block check.
    const forgedRoot = await Promise.all([net.faultPeer(t, 'forged-root'), net.faultPeer(t, 'forged-root')]);
    // A pair naming the block's root with a manifest whose subtrees hash to another: refused at the manifest check.
    const forgedManifest = await Promise.all([net.faultPeer(t, 'forged-manifest'), net.faultPeer(t, 'forged-manifest')]);
    const later = net.reserve();
    const joiner = net.joiner(t, [...forgedRoot, ...forgedManifest].map((f) => f.addr).concat(net.addr(0), later.addr));
    await waitFor(
      () => [...forgedRoot, ...forgedManifest].every((f) => penalties(joiner.node, f.peerId).length > 0),
      120_000,
      'every forged peer penalized',
    ).catch(async (err) => {
      t.log(joiner.logs.join('').split('\n').slice(-30).join('\n'));
      throw err;
    });
    for (const f of forgedRoot) {
      const against = penalties(joiner.node, f.peerId);
      t.is(against.length, 1, JSON.stringify(against));
      t.regex(against[0].reason, /snapshot block does not match its offer/);
    }
    for (const f of forgedManifest) {
      const against = penalties(joiner.node, f.peerId);
      t.is(against.length, 1, JSON.stringify(against));
      t.regex(against[0].reason, /bad manifest: manifest subtrees give state root/);
    }
    // One honest peer offers its snapshots: not enough. The node keeps discovering and serves no state.
    const s = await net.joinStatus(joiner.node);
    t.is(s?.phase, 'discovering');
    t.is(s?.chunks_done, 0);
    await net.assertRefusesState(t, joiner.node);
    t.deepEqual(logLines(joiner, 'state sync: snapshot chosen'), [], 'no forged snapshot was restored');

    // A second honest peer: the join completes at an honest snapshot.
    await net.faultPeer(t, 'none', { slot: later, snapshots: net.snapshotsDir(1) });
    const done = await net.joined(t, joiner);
    t.true(done.earliest % SNAPSHOT_INTERVAL === 0, `joined at an honest snapshot (${done.earliest})`);
    t.deepEqual(penalties(joiner.node, honestId(0)), []);
    t.deepEqual(penalties(joiner.node, later.peerId), []);
    await net.assertSameBalance(t, joiner.node, done.latest);
  },
);

test.serial('a peer that disappears mid-transfer is left out, unblamed, and the join completes from the other', async (t) => {
  t.timeout(240_000);
  const leaving = await net.faultPeer(t, 'hang', { honestChunks: 1 });
  const joiner = net.joiner(t, [leaving.addr, net.addr(0)]);
  // It served a chunk and holds the next ones: the restore cannot finish while it lives.
  const mid = await waitFor(
    async () => {
      const s = await net.joinStatus(joiner.node);
      return leaving.count('served-chunk') >= 1 && leaving.count('holding-chunk') >= 1 && s?.phase === 'fetching' ? s : null;
    },
    120_000,
    'the leaving peer holds a chunk request',
  );
  t.true(mid.chunks_done < mid.chunks_total, `mid-transfer: ${mid.chunks_done}/${mid.chunks_total}`);
  await leaving.kill();
  const done = await net.joined(t, joiner);
  t.deepEqual(penalties(joiner.node, leaving.peerId), [], 'a peer that went away is not blamed');
  await net.assertSameBalance(t, joiner.node, done.latest);
});

test.serial(
  'kill -9 and SIGTERM mid-restore: each restart resumes the chunks written, no state is served before the end',
  async (t) => {
    t.timeout(300_000);
    // Peers serving a copy of one snapshot (no pruning can take it away); the joining node trusts that block.
    const frozen = await net.freezeNewestSnapshot();
    const trust = ['--state-sync-trust', `${frozen.height}:${frozen.blockHash}`];
    const holding = await Promise.all([
      net.faultPeer(t, 'hang', { snapshots: frozen.dir, honestChunks: 2 }),
      net.faultPeer(t, 'hang', { snapshots: frozen.dir, honestChunks: 2 }),
    ]);
    const first = net.joiner(
      t,
      holding.map((h) => h.addr),
      trust,
    );
    // Each serves two chunks, then holds two requests: 4 chunks written, the restore stuck.
    const stuck = await waitFor(
      async () => {
        const s = await net.joinStatus(first.node);
        return holding.every((h) => h.count('holding-chunk') === 2) && s?.chunks_done === 4 ? s : null;
      },
      120_000,
      'the restore stuck with 4 chunks written',
    );
    t.is(stuck.phase, 'fetching');
    t.is(stuck.snapshot_height, frozen.height);
    t.true(stuck.chunks_total > 4 + 4, `${stuck.chunks_total} chunks`);
    const metrics = await (await fetch(`${first.node.api_url}/metrics`)).text();
    t.regex(metrics, /^native_state_sync_chunks_done 4$/m);
    t.regex(metrics, new RegExp(`^native_state_sync_chunks_total ${stuck.chunks_total}$`, 'm'));
    await net.assertRefusesState(t, first.node);
    await stopNode(first, 'SIGKILL');

    // Restarted (same peers, still holding): it resumes with the 4 chunks written, then is stuck again.
    const second = net.joiner(
      t,
      holding.map((h) => h.addr),
      trust,
      first.node,
    );
    await waitFor(() => logLines(second, 'state sync: snapshot chosen').length > 0, 120_000, 'the second run chose');
    t.is(logLines(second, 'state sync: snapshot chosen')[0].resumed, 4, 'resumed after kill -9');
    await waitFor(() => holding.every((h) => h.count('holding-chunk') >= 3), 60_000, 'new requests held');
    await net.assertRefusesState(t, second.node);
    t.is((await net.joinStatus(second.node))?.chunks_done, 4);
    // SIGTERM while the restore runs: the node's signal handlers are not installed yet, so the process ends at once.
    await stopNode(second, 'SIGTERM');
    t.is(second.proc.signalCode, 'SIGTERM', `ended by the signal (exit code ${second.proc.exitCode})`);

    // Restarted with honest peers of the same snapshot: resumes again, completes, and follows the validators.
    const honest = await Promise.all([
      net.faultPeer(t, 'none', { snapshots: frozen.dir }),
      net.faultPeer(t, 'none', { snapshots: frozen.dir }),
    ]);
    const third = net.joiner(t, [...honest.map((h) => h.addr), net.addr(0), net.addr(1)], trust, first.node);
    const done = await net.joined(t, third);
    t.is(logLines(third, 'state sync: snapshot chosen')[0].resumed, 4, 'resumed after SIGTERM');
    t.is(done.earliest, frozen.height);
    await net.assertSameBalance(t, third.node, done.latest);
  },
);

test.serial(
  'a snapshot pruned by its peers while it is fetched is given up; the node starts over with a newer one',
  async (t) => {
    t.timeout(480_000);
    // The snapshot is pruned at a moment the test chooses, not when the block rate gets validator 0 there (a
    // restore that outlives a hanging peer's three timeouts, 90 s, would fetch the held chunks from validator 0
    // and never give up). Two peers serve one frozen copy of validator 0's newest snapshot h, one holding every
    // chunk request, the other answering; validator 0 has pruned h before the joining node starts, so only they
    // offer it. The test then prunes the copy the way pruning does: the snapshot's directory goes.
    const frozen = await net.freezeNewestSnapshot();
    const h = frozen.height;
    await waitFor(() => !net.snapshotHeights(0).includes(h), 120_000, `snapshot ${h} pruned by validator 0`);
    const [holding, pruning] = await Promise.all([
      net.faultPeer(t, 'hang', { honestChunks: 0, snapshots: frozen.dir }),
      net.faultPeer(t, 'none', { snapshots: frozen.dir }),
    ]);
    const later = net.reserve();
    const joiner = net.joiner(t, [holding.addr, pruning.addr, net.addr(0), later.addr]);
    // Stuck: the answering peer has served its part, the one or two chunks the holding peer got at the start of
    // the fetch are held (a request it held earlier, for the chunk that proves the validator set, may have timed
    // out already: the holding count says nothing about the fetch).
    const first = await waitFor(
      async () => {
        const s = await net.joinStatus(joiner.node);
        if (s?.phase !== 'fetching') return null;
        const left = (s.chunks_total as number) - (s.chunks_done as number);
        return left >= 1 && left <= 2 && holding.count('holding-chunk') >= 1 ? s : null;
      },
      120_000,
      'the restore stuck on held chunks',
    );
    t.is(first.snapshot_height, h);
    // Well within the held requests' 30 s timeout: their retries find the chunks gone everywhere.
    rmSync(join(frozen.dir, String(h)), { recursive: true, force: true });
    await holding.kill();
    await waitFor(
      () => logLines(joiner, 'state sync: no peer left for the snapshot; choosing another').length > 0,
      150_000,
      'the snapshot given up',
    );
    // Back to discovering (validator 0's newer snapshots have one peer each), still refusing state reads.
    const between = await net.joinStatus(joiner.node);
    t.is(between?.phase, 'discovering');
    t.is(between?.snapshot_height, null);
    await net.assertRefusesState(t, joiner.node);
    // A second honest peer: validator 0's newer snapshots offered by two.
    await net.faultPeer(t, 'none', { slot: later, snapshots: net.snapshotsDir(1) });
    const done = await net.joined(t, joiner);
    t.true(
      logLines(joiner, 'state sync: the unfinished restore is no longer offered; starting over').length >= 1,
      'started over',
    );
    t.true(done.earliest > h, `joined at a newer snapshot (${done.earliest} > ${h})`);
    t.deepEqual(penalties(joiner.node, holding.peerId), []);
    t.deepEqual(penalties(joiner.node, pruning.peerId), [], 'a pruned snapshot is no fault');
    await net.assertSameBalance(t, joiner.node, done.latest);
  },
);
