import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import {
  SnapshotAbort,
  SnapshotDirectory,
  SnapshotRestorer,
  SnapshotSchedule,
  startSnapshot,
  verifyChunk,
  verifyManifest,
} from '../../ts/snapshot/index.js';
import { StateStore } from '../../ts/state/index.js';
import { type KvStore, P, openRocksStore, prefixEnd, stateKey } from '../../ts/storage/index.js';
import type { Block } from '../../ts/chain/index.js';
import { bftParams, nextFinalized } from '../helpers/bft-blocks.js';
import { alice, openFixtureChain, transfer } from '../helpers/chain-fixture.js';
import { extendTo, openCheckpointChain } from '../helpers/checkpoint-chain.js';
import { rng, tempDir } from '../helpers/util.js';

const STATE = Buffer.from([P.state]);
/** Small spill, subtree and chunk bounds: a 2.5 MB state spills to bucket files, splits buckets and makes dozens of chunks. */
const LIMITS = { subtreeMaxBytes: 8 * 1024, chunkTargetBytes: 64 * 1024, spillBytes: 8 * 1024 };

/** `n` random entries written straight to `S` (accounts-sized and storage-sized keys); returns the keys. */
async function fillState(db: KvStore, n: number, seed: number): Promise<Buffer[]> {
  const r = rng(seed);
  const bytes = (len: number) => Buffer.from(Array.from({ length: len }, () => Math.floor(r() * 256)));
  const keys: Buffer[] = [];
  const batch = db.batch();
  for (let i = 0; i < n; i++) {
    const key = bytes(r() < 0.5 ? 21 : 53);
    keys.push(key);
    batch.put(stateKey(key), bytes(10 + Math.floor(r() * 190)));
  }
  await batch.write();
  return keys;
}

async function rootOf(db: KvStore): Promise<string> {
  const s = new StateStore({ db });
  await s.rebuildTrie();
  return s.root().toString('hex');
}

test('a snapshot is the state when it started though blocks keep writing, spills to files, yields the event loop, and restores', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const db = await openRocksStore(join(tmp.dir, 'db'));
  t.teardown(() => db.close());
  const keys = await fillState(db, 20_000, 25);
  const root = await rootOf(db);
  const before = await db.range({ gte: STATE, lt: prefixEnd(STATE) });
  const dir = new SnapshotDirectory(join(tmp.dir, 'snapshots'));

  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const taking = startSnapshot(db, { height: 7, hash: 'aa'.repeat(32), stateRoot: root }, dir.root, new SnapshotAbort(), LIMITS);
  // The next block's batch, written right after the snapshot started: changes, deletions, new keys.
  const next = db.batch();
  for (let i = 0; i < 2000; i++) next.put(stateKey(keys[i]), Buffer.from('changed'));
  for (let i = 2000; i < 3000; i++) next.del(stateKey(keys[i]));
  for (let i = 0; i < 500; i++) next.put(stateKey(Buffer.from(`new-key-${i}`)), Buffer.from('new'));
  await next.write();
  const manifest = await taking;
  clearInterval(timer);
  t.log(
    `${manifest.entries} entries, ${manifest.subtrees.length} subtrees, ${manifest.chunks.length} chunks; ${ticks} timer ticks ran during the take`,
  );
  t.is(manifest.state_root, root, 'the root is the state at the start (the take checks it before publishing)');
  t.is(manifest.entries, 20_000);
  t.true(manifest.chunks.length > 20);
  t.true(
    manifest.subtrees.some((s) => s.prefix.length > 2),
    'buckets over the subtree bound are split',
  );
  t.true(ticks >= 3, 'the event loop ran while the snapshot was taken');
  t.true(
    manifest.chunks.every((c) => c.bytes <= LIMITS.chunkTargetBytes + LIMITS.subtreeMaxBytes),
    'chunks stay near the target',
  );
  t.false(
    readdirSync(dir.root).some((n) => n.endsWith('.tmp')),
    'no bucket files or temporary directory left',
  );
  verifyManifest(manifest, root);

  const fresh = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => fresh.close());
  const restorer = await SnapshotRestorer.open(fresh, manifest, root);
  const chunks = await Promise.all(manifest.chunks.map((_, i) => dir.chunk(7, i)));
  await Promise.all(chunks.map((c, i) => restorer.addChunk(i, c as Buffer)));
  t.is((await restorer.finish()).root().toString('hex'), root);
  t.deepEqual(await fresh.range({ gte: STATE, lt: prefixEnd(STATE) }), before);
});

test('an aborted snapshot leaves nothing behind; unfinished ones are cleared at start', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const db = await openRocksStore(join(tmp.dir, 'db'));
  t.teardown(() => db.close());
  await fillState(db, 20_000, 26);
  const root = await rootOf(db);
  const dir = new SnapshotDirectory(join(tmp.dir, 'snapshots'));
  const abort = new SnapshotAbort();
  const taking = startSnapshot(db, { height: 3, hash: 'bb'.repeat(32), stateRoot: root }, dir.root, abort, LIMITS);
  abort.aborted = true;
  await t.throwsAsync(taking, { message: /aborted/ });
  t.deepEqual(readdirSync(dir.root), []);

  // A wrong root (not this state's) is never published either.
  await t.throwsAsync(startSnapshot(db, { height: 4, hash: 'bb'.repeat(32), stateRoot: 'cc'.repeat(32) }, dir.root), {
    message: /not the block's/,
  });
  t.deepEqual(dir.heights(), []);

  mkdirSync(join(dir.root, '9.tmp'));
  t.is(dir.clearUnfinished(), 1);
  t.false(existsSync(join(dir.root, '9.tmp')));
});

test('--snapshot-interval 3 --snapshot-keep 2: snapshots of every third block, the newest two kept, each the block state', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openCheckpointChain(join(tmp.dir, 'node'));
  t.teardown(() => db.close());
  mkdirSync(join(tmp.dir, 'node', 'snapshots', '2.tmp'), { recursive: true });
  const logged: string[] = [];
  const schedule = new SnapshotSchedule(chain, db, {
    dataDir: join(tmp.dir, 'node'),
    interval: 3,
    keep: 2,
    log: (_level, _fields, msg) => logged.push(msg),
  });
  t.teardown(() => schedule.stop());
  t.false(existsSync(join(tmp.dir, 'node', 'snapshots', '2.tmp')), 'an unfinished snapshot of a previous run is removed');
  const roots = new Map<number, string>();
  for (let h = 1; h <= 10; h++) {
    await extendTo(chain, h);
    roots.set(h, chain.head.state_root);
    await schedule.idle();
  }
  t.deepEqual(schedule.directory.heights(), [9, 6]);
  t.like(schedule.stats, { taken: 3, failed: 0, lastHeight: 9 });
  t.true(logged.includes('state snapshot taken'));
  for (const h of [9, 6]) {
    const m = await schedule.directory.manifest(h);
    const root = roots.get(h);
    if (m === null || root === undefined) return t.fail(`no manifest or root at ${h}`);
    t.is(m.state_root, root);
    t.is(m.block_hash, (await chain.blocks.getBlock(h))?.hash ?? 'missing');
    verifyManifest(m, root);
    for (let i = 0; i < m.chunks.length; i++) verifyChunk(m, i, (await schedule.directory.chunk(h, i)) as Buffer);
  }
  // A rollback below a snapshot's height removes it: that block is no longer this chain's.
  await chain.rollbackTo(8);
  t.deepEqual(schedule.directory.heights(), [6]);
  await schedule.stop();
  await extendTo(chain, 12);
  t.deepEqual(schedule.directory.heights(), [6], 'nothing is taken once stopped');
});

test("a syncing chain: a due height inside an import run is skipped, the run's last block is snapshotted after its write", async (t) => {
  const params = bftParams('testnet');
  const src = tempDir();
  const dst = tempDir();
  t.teardown(() => {
    src.cleanup();
    dst.cleanup();
  });
  const maker = await openFixtureChain(src.dir, params);
  const blocks: Block[] = [];
  for (let i = 0; i < 8; i++) blocks.push(await nextFinalized(maker.chain, [transfer(alice, BigInt(i))]));
  await maker.db.close();
  const sync = await openFixtureChain(dst.dir, params);
  t.teardown(() => sync.db.close());
  const schedule = new SnapshotSchedule(sync.chain, sync.db, { dataDir: dst.dir, interval: 4, keep: 5 });
  t.teardown(() => schedule.stop());
  const durable: number[] = [];
  sync.chain.on('durable', (b) => durable.push(b.index));
  // Blocks 1..6 in one run (4 falls inside it), then 7..8 (8 ends the second run).
  t.is(await sync.chain.importRun(blocks.slice(0, 6)), 6);
  await schedule.idle();
  t.is(await sync.chain.importRun(blocks.slice(6)), 2);
  await schedule.idle();
  t.deepEqual(durable, [6, 8], 'one durable event per run, after its write');
  t.deepEqual(schedule.directory.heights(), [8]);
  const m = await schedule.directory.manifest(8);
  t.is(m?.state_root, blocks[7].state_root);
});
