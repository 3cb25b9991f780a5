import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { trieCheckpointsSupported } from '../../ts/chain/index.js';
import {
  ForgedManifestRootError,
  SnapshotChunkError,
  SnapshotDirectory,
  type SnapshotManifest,
  SnapshotRestorer,
  SnapshotAbort,
  decodeManifest,
  encodeManifest,
  manifestId,
  startSnapshot,
  verifyChunk,
  verifyManifest,
  RestoreRefusedError,
} from '../../ts/snapshot/index.js';
import { NativeTrie, StateStore, keyStr } from '../../ts/state/index.js';
import { type KvStore, P, openRocksStore, prefixEnd } from '../../ts/storage/index.js';
import { extendTo, openCheckpointChain } from '../helpers/checkpoint-chain.js';
import { tempDir } from '../helpers/util.js';

/** Cut finely so a dev chain's small state makes several subtrees below the first two nibbles and several chunks. */
const FINE = { subtreeMaxBytes: 1, chunkTargetBytes: 400, spillBytes: 64 };
const STATE = Buffer.from([P.state]);

async function stateRows(db: KvStore): Promise<[Buffer, Buffer][]> {
  return db.range({ gte: STATE, lt: prefixEnd(STATE) });
}

/** A dev chain of 12 blocks and a snapshot of its head in `<dir>/snapshots`. */
async function chainWithSnapshot(dir: string) {
  const { chain, db } = await openCheckpointChain(join(dir, 'node'));
  await extendTo(chain, 12);
  const head = chain.head;
  const snapshots = new SnapshotDirectory(join(dir, 'snapshots'));
  const manifest = await startSnapshot(
    db,
    { height: head.index, hash: head.hash, stateRoot: head.state_root },
    snapshots.root,
    new SnapshotAbort(),
    FINE,
  );
  return { chain, db, head, snapshots, manifest };
}

async function readChunks(snapshots: SnapshotDirectory, m: SnapshotManifest): Promise<Buffer[]> {
  return Promise.all(m.chunks.map(async (_, i) => (await snapshots.chunk(m.height, i)) as Buffer));
}

test('round trip: take, verify every chunk, restore into a fresh store: same root, same reads, a usable trie checkpoint', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots, manifest } = await chainWithSnapshot(tmp.dir);
  const original = await stateRows(db);
  t.true(original.length > 20);
  t.is(manifest.height, 12);
  t.is(manifest.state_root, head.state_root);
  t.is(manifest.entries, original.length);
  t.true(manifest.chunks.length >= 3, `${manifest.chunks.length} chunks`);
  t.true(
    manifest.subtrees.some((s) => s.prefix.length > 2),
    'a bucket over the subtree bound is split by the next nibble',
  );
  // The published directory: manifest + chunks, no temporary files; the manifest reads back identical.
  t.deepEqual(snapshots.heights(), [12]);
  const files = readdirSync(join(snapshots.root, '12')).sort();
  t.is(files.length, manifest.chunks.length + 1);
  t.false(readdirSync(snapshots.root).some((n) => n.endsWith('.tmp')));
  const stored = (await snapshots.manifest(12)) as SnapshotManifest;
  t.is(manifestId(stored), manifestId(manifest));
  t.deepEqual(encodeManifest(decodeManifest(encodeManifest(manifest))), encodeManifest(manifest));

  verifyManifest(stored, `0x${head.state_root}`);
  const chunks = await readChunks(snapshots, stored);
  let entries = 0;
  for (const [i, c] of chunks.entries()) entries += verifyChunk(stored, i, c).length;
  t.is(entries, original.length);
  await db.close();

  // Restore into a fresh database, chunks in reverse order.
  const freshDb = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => freshDb.close());
  const ckpt = join(tmp.dir, 'fresh-trie.ckpt');
  const restorer = await SnapshotRestorer.open(freshDb, stored, head.state_root);
  for (let i = chunks.length - 1; i >= 0; i--) t.true(await restorer.addChunk(i, chunks[i]));
  t.false(await restorer.addChunk(0, chunks[0]), 'a chunk already written is not written again');
  const state = await restorer.finish(ckpt);
  t.is(state.root().toString('hex'), head.state_root);
  t.deepEqual(await stateRows(freshDb), original);
  // Reads through a new store over the restored database answer as the original.
  const reader = new StateStore({ db: freshDb });
  for (const [k, v] of original) t.deepEqual(reader.get(keyStr(k.subarray(1))), v);
  // Canonical: the restored node's own snapshot of that height is the same snapshot (same id, same chunk bytes),
  // so peers that took it independently offer one id.
  const again = await startSnapshot(
    freshDb,
    { height: head.index, hash: head.hash, stateRoot: head.state_root },
    join(tmp.dir, 'again'),
    new SnapshotAbort(),
    FINE,
  );
  t.is(manifestId(again), manifestId(stored));
  t.deepEqual(await readChunks(new SnapshotDirectory(join(tmp.dir, 'again')), again), chunks);
  if (trieCheckpointsSupported()) {
    const loaded = NativeTrie.loadCheckpoint(ckpt);
    t.truthy(loaded);
    t.is(loaded?.trie.rootHash().toString('hex'), head.state_root);
    t.is(Number(loaded?.meta.readBigUInt64BE(1)), 12);
  } else t.false(existsSync(ckpt));
});

test('a corrupt, swapped or truncated chunk is detected and named, and nothing of it is written', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, snapshots, manifest } = await chainWithSnapshot(tmp.dir);
  await db.close();
  const chunks = await readChunks(snapshots, manifest);
  const bad = 2;
  const flipped = Buffer.from(chunks[bad]);
  flipped[flipped.length - 1] ^= 0x01; // the last value's last byte
  const cases: [string, Buffer][] = [
    ['a flipped value byte', flipped],
    ['another chunk', chunks[1]],
    ['truncated', chunks[bad].subarray(0, chunks[bad].length - 3)],
    ['empty', Buffer.alloc(0)],
    ['an entry dropped', dropFirstEntry(chunks[bad])],
  ];
  for (const [what, bytes] of cases) {
    const err = t.throws(() => verifyChunk(manifest, bad, bytes), { instanceOf: SnapshotChunkError }, what);
    t.is(err?.index, bad, what);
  }
  const freshDb = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => freshDb.close());
  const restorer = await SnapshotRestorer.open(freshDb, manifest);
  await t.throwsAsync(restorer.addChunk(bad, flipped), { instanceOf: SnapshotChunkError, message: /chunk 2 is invalid/ });
  t.deepEqual(await stateRows(freshDb), [], 'nothing of the bad chunk reached the database');
  t.true(restorer.missing().includes(bad));
  // The good copy, fetched elsewhere, is accepted.
  t.true(await restorer.addChunk(bad, chunks[bad]));
  t.false(restorer.missing().includes(bad));

  // A corrupt chunk file on the serving side is caught the same way.
  writeFileSync(join(snapshots.root, String(manifest.height), `chunk-${bad}.bin`), flipped);
  t.throws(() => verifyChunk(manifest, bad, readFileSync(join(snapshots.root, String(manifest.height), `chunk-${bad}.bin`))), {
    instanceOf: SnapshotChunkError,
  });
});

/** The chunk with its first entry removed (count and bytes consistent, so it decodes). */
function dropFirstEntry(chunk: Buffer): Buffer {
  const n = chunk.readUInt32BE(1);
  const kl = chunk.readUInt16BE(5);
  const vl = chunk.readUInt32BE(7 + kl);
  const rest = chunk.subarray(5 + 2 + kl + 4 + vl);
  const head = Buffer.alloc(5);
  head[0] = chunk[0];
  head.writeUInt32BE(n - 1, 1);
  return Buffer.concat([head, rest]);
}

test('a forged manifest is refused: another state root, a changed subtree hash, a root other than the trusted one', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, manifest } = await chainWithSnapshot(tmp.dir);
  await db.close();
  const forgedRoot: SnapshotManifest = { ...manifest, state_root: 'ab'.repeat(32) };
  t.throws(() => verifyManifest(forgedRoot), { instanceOf: ForgedManifestRootError });
  const sub = manifest.subtrees[1];
  const forgedSubtree: SnapshotManifest = {
    ...manifest,
    subtrees: manifest.subtrees.map((s) => (s === sub ? { ...s, hash: 'cd'.repeat(32) } : s)),
  };
  t.throws(() => verifyManifest(forgedSubtree), { instanceOf: ForgedManifestRootError });
  // Consistent with itself (a whole other state) but not the block this node trusts.
  t.throws(() => verifyManifest(manifest, 'ef'.repeat(32)), { instanceOf: ForgedManifestRootError });
  t.notThrows(() => verifyManifest(manifest, head.state_root));
  // Malformed: unsorted subtrees, a subtree inside another, chunks that skip a subtree.
  const swapped = [...manifest.subtrees];
  [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
  t.throws(() => verifyManifest({ ...manifest, subtrees: swapped }), { message: /is not after/ });
  const nested = manifest.subtrees.map((s, i) => (i === 1 ? { ...s, prefix: `${manifest.subtrees[0].prefix}0` } : s));
  t.throws(() => verifyManifest({ ...manifest, subtrees: nested }));
  t.throws(() => verifyManifest({ ...manifest, chunks: manifest.chunks.slice(1) }), { message: /starts at subtree/ });
  t.throws(() => decodeManifest(Buffer.from('{"format":2}')), { message: /format 2/ });
  t.throws(() => decodeManifest(Buffer.from('[1,2]')), { message: /not a JSON object/ });

  const freshDb = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => freshDb.close());
  await t.throwsAsync(SnapshotRestorer.open(freshDb, forgedRoot), { instanceOf: ForgedManifestRootError });
  await t.throwsAsync(SnapshotRestorer.open(freshDb, manifest, 'ef'.repeat(32)), { instanceOf: ForgedManifestRootError });
});

test('a restore resumes after a restart with the chunks already written, and refuses another snapshot or a used database', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots, manifest } = await chainWithSnapshot(tmp.dir);
  await t.throwsAsync(SnapshotRestorer.open(db, manifest), { instanceOf: RestoreRefusedError }, 'a node with state');
  await db.close();
  const chunks = await readChunks(snapshots, manifest);
  const path = join(tmp.dir, 'fresh');
  let freshDb = await openRocksStore(path);
  let restorer = await SnapshotRestorer.open(freshDb, manifest);
  const half = Math.floor(chunks.length / 2);
  for (let i = 0; i < half; i++) await restorer.addChunk(i, chunks[i]);
  await t.throwsAsync(restorer.finish(), { message: /still missing/ });
  await freshDb.close();

  freshDb = await openRocksStore(path);
  t.teardown(() => freshDb.close());
  const other: SnapshotManifest = { ...manifest, height: manifest.height + 1 };
  await t.throwsAsync(SnapshotRestorer.open(freshDb, other), { instanceOf: RestoreRefusedError });
  restorer = await SnapshotRestorer.open(freshDb, manifest);
  t.is(restorer.chunksDone, half);
  t.deepEqual(restorer.missing(), chunks.map((_, i) => i).slice(half));
  for (const i of restorer.missing()) await restorer.addChunk(i, chunks[i]);
  t.is((await restorer.finish()).root().toString('hex'), head.state_root);
});

test('chunks written at once are all in the progress record: a restart resumes with every one of them', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots, manifest } = await chainWithSnapshot(tmp.dir);
  await db.close();
  const chunks = await readChunks(snapshots, manifest);
  t.true(chunks.length >= 3);
  const path = join(tmp.dir, 'fresh');
  let freshDb = await openRocksStore(path);
  const restorer = await SnapshotRestorer.open(freshDb, manifest);
  // A fetch hands chunks to the restorer as they arrive from several peers: their writes overlap.
  const all = chunks.map((_, i) => i);
  await Promise.all(all.slice(1).map((i) => restorer.addChunk(i, chunks[i])));
  await freshDb.close();

  freshDb = await openRocksStore(path);
  t.teardown(() => freshDb.close());
  const resumed = await SnapshotRestorer.open(freshDb, manifest);
  t.deepEqual(resumed.missing(), [0]);
  await resumed.addChunk(0, chunks[0]);
  t.is((await resumed.finish()).root().toString('hex'), head.state_root);
});
