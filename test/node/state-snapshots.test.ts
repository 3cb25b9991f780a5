import { join } from 'node:path';
import test from 'ava';
import { parseConfig } from '../../ts/node/index.js';
import { SNAPSHOTS_DIR, SnapshotDirectory, verifyChunk, verifyManifest } from '../../ts/snapshot/index.js';
import { startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

test('--snapshot-interval and --snapshot-keep: defaults per network, values checked', (t) => {
  t.like(parseConfig(['--network', 'testnet'], {}), { snapshotInterval: 1000, snapshotKeep: 2 });
  t.like(parseConfig(['--dev'], {}), { snapshotInterval: 0, snapshotKeep: 2 });
  t.like(parseConfig(['--dev', '--snapshot-interval', '5', '--snapshot-keep', '3'], {}), {
    snapshotInterval: 5,
    snapshotKeep: 3,
  });
  t.like(parseConfig(['--dev'], { NATIVE_SNAPSHOT_INTERVAL: '7' }), { snapshotInterval: 7 });
  t.throws(() => parseConfig(['--dev', '--snapshot-keep', '0'], {}), {
    message: /--snapshot-keep \/ NATIVE_SNAPSHOT_KEEP must be an integer >= 1/,
  });
  t.throws(() => parseConfig(['--dev', '--snapshot-interval', '-1'], {}));
});

test('--state-sync and --state-sync-trust: parsed, and refused where they cannot work', (t) => {
  const peer = '/ip4/127.0.0.1/tcp/1/p2p/16Uiu2HAmK3n5t6z8XxJq3Zf5w6Qm2X7Yk3tAq1u5bN4cV8dE9fGh';
  const base = ['--network', 'testnet', '--p2p-port', '0', '--peers', peer];
  t.like(parseConfig(base, {}), { stateSync: false, stateSyncTrust: undefined });
  const hash = 'Ab'.repeat(32);
  t.like(parseConfig([...base, '--state-sync', '--state-sync-trust', `12:0x${hash}`], {}), {
    stateSync: true,
    stateSyncTrust: { height: 12, hash: hash.toLowerCase() },
  });
  t.throws(() => parseConfig([...base, '--state-sync', '--state-sync-trust', '12:abc'], {}), {
    message: /--state-sync-trust must be HEIGHT:HASH/,
  });
  t.throws(() => parseConfig([...base, '--state-sync-trust', `12:${hash}`], {}), { message: /goes with --state-sync/ });
  t.throws(() => parseConfig(['--network', 'testnet', '--state-sync'], {}), {
    message: /--state-sync needs --p2p-port and --peers/,
  });
});

test('a running node takes a snapshot every N blocks, keeps the newest K, each verifying against its block', async (t) => {
  const n = await startTestNode({ snapshotInterval: 3, snapshotKeep: 2, blockTimeMs: 100 });
  t.teardown(() => n.stop());
  const dir = new SnapshotDirectory(join(n.dataDir, SNAPSHOTS_DIR));
  const heights = await waitFor(
    () => {
      const h = dir.heights();
      return h.length === 2 && h[0] >= 9 ? h : null;
    },
    60_000,
    'two snapshots, the newest at height 9 or above',
  );
  t.is(heights[0] - heights[1], 3);
  t.true(heights.every((h) => h % 3 === 0));
  const chain = n.node.ctx.chain;
  for (const h of heights) {
    const m = await dir.manifest(h);
    const block = await chain.blocks.getBlock(h);
    if (m === null || block === null) return t.fail(`snapshot or block ${h} missing`);
    t.is(m.block_hash, block.hash);
    verifyManifest(m, block.state_root);
    for (let i = 0; i < m.chunks.length; i++) verifyChunk(m, i, (await dir.chunk(h, i)) as Buffer);
  }
});
