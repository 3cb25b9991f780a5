/**
 * Reading a few keys of a snapshot's state from the chunks that hold them (ts/sync/snapshot-probe.ts), on a real
 * chain's snapshot cut into many chunks (RocksDB in a temp dir): every key of the state reads as the state holds
 * it, after fetching only its own chunk; a key no subtree covers is absent without any fetch; a chunk that is not
 * the manifest's is refused by `add`; a read wanting more chunks than the probe allows stops.
 */
import test from 'ava';
import { SnapshotChunkError, snapshotSource } from '../../ts/snapshot/index.js';
import { StateStore, keyStr } from '../../ts/state/index.js';
import { P, prefixEnd } from '../../ts/storage/index.js';
import { ChunkedState, PROBE_MAX_CHUNKS, readSnapshotState } from '../../ts/sync/snapshot-probe.js';
import { chainSnapshot } from '../helpers/snapshot-peers.js';
import { tempDir } from '../helpers/util.js';

test('keys of a snapshot state read from their own chunk only, absent keys from none; a foreign chunk is refused', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, manifest, snapshots } = await chainSnapshot(tmp.dir, 20);
  t.teardown(() => db.close());
  const source = snapshotSource(snapshots);
  const id = (await source.offers())[0].id;
  t.true(manifest.chunks.length > PROBE_MAX_CHUNKS, `${manifest.chunks.length} chunks`);
  const live = new StateStore({ db });
  const table = Buffer.from([P.state]);
  const rows = await db.range({ gte: table, lt: prefixEnd(table) });
  t.is(rows.length, manifest.entries);

  const fetched: number[] = [];
  const fetch = async (index: number, state: ChunkedState) => {
    fetched.push(index);
    const bytes = Buffer.from((await source.part(manifest.height, id, index)) as Uint8Array);
    state.add(index, bytes);
    return bytes;
  };
  for (const [k] of rows.slice(0, 8)) {
    const key = keyStr(k.subarray(1));
    fetched.length = 0;
    const read = await readSnapshotState(manifest, (s) => s.get(key), fetch);
    t.deepEqual(read?.value, live.get(key), 'the value the state holds');
    t.deepEqual(fetched, [new ChunkedState(manifest).chunkOf(key)], 'its own chunk, once');
    t.deepEqual([...(read?.chunks.keys() ?? [])], fetched);
  }
  // A reader that catches every error (finalityProblem turns them into refusals) still gets its chunk fetched.
  const [k0] = rows[0];
  const catching = await readSnapshotState(
    manifest,
    (st) => {
      try {
        return st.get(keyStr(k0.subarray(1)));
      } catch {
        return 'swallowed';
      }
    },
    fetch,
  );
  t.deepEqual(catching?.value, live.get(keyStr(k0.subarray(1))));
  // A key no subtree covers is proven absent by the manifest alone; one a subtree covers needs its chunk.
  let absent = 0;
  for (let i = 0; i < 200 && absent === 0; i++) {
    const key = keyStr(Buffer.from(`missing-${i}`));
    if (new ChunkedState(manifest).chunkOf(key) !== null) continue;
    fetched.length = 0;
    const read = await readSnapshotState(manifest, (s) => s.get(key), fetch);
    t.is(read?.value, undefined);
    t.deepEqual(fetched, []);
    absent++;
  }
  t.is(absent, 1);

  // Another chunk's bytes under this index, or no peer serving it.
  const state = new ChunkedState(manifest);
  const other = Buffer.from((await source.part(manifest.height, id, 1)) as Uint8Array);
  t.throws(() => state.add(0, other), { instanceOf: SnapshotChunkError });
  const firstKey = keyStr(rows[0][0].subarray(1));
  t.is(
    await readSnapshotState(
      manifest,
      (s) => s.get(firstKey),
      async () => null,
    ),
    null,
  );
  // Reading every key wants every chunk: more than the probe fetches.
  await t.throwsAsync(
    readSnapshotState(manifest, (s) => rows.map(([k]) => s.get(keyStr(k.subarray(1)))), fetch),
    { message: new RegExp(`more than ${PROBE_MAX_CHUNKS} chunks`) },
  );
});
