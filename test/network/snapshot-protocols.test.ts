/**
 * `P/snapshots/1` and `P/snapshot-chunk/1` between real libp2p hosts on 127.0.0.1: a node serving the snapshot
 * of a real chain, another listing it, fetching its manifest and every chunk, verifying each on arrival and
 * restoring the state; strict requests (a malformed one costs the sender points).
 */
import { join } from 'node:path';
import test from 'ava';
import { parseSnapshotPartRequest } from '../../ts/network/snapshot-chunk.js';
import { parseSnapshotOffers, parseSnapshotsRequest } from '../../ts/network/snapshots.js';
import { RequestAbuse } from '../../ts/network/serving.js';
import {
  SnapshotRestorer,
  decodeManifest,
  manifestId,
  snapshotSource,
  verifyChunk,
  verifyManifest,
} from '../../ts/snapshot/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import {
  addrOf,
  chainSnapshot,
  snapshotHost,
  snapshotTestGenesis as GENESIS,
  SNAPSHOT_TEST_CHAIN_ID as CHAIN_ID,
} from '../helpers/snapshot-peers.js';
import { lpStream } from '@libp2p/utils';
import type { Stream } from '@libp2p/interface';
import { rawHandshake, startRawPeer } from '../helpers/rogue-requests.js';
import { tempDir, waitFor } from '../helpers/util.js';

const enc = (o: unknown) => Buffer.from(JSON.stringify(o));

test('snapshot requests and offers are parsed strictly', (t) => {
  t.notThrows(() => parseSnapshotsRequest(enc({})));
  for (const bad of [[], null, 5, 'x']) t.throws(() => parseSnapshotsRequest(enc(bad)), { instanceOf: RequestAbuse });
  const id = 'ab'.repeat(32);
  t.deepEqual(parseSnapshotPartRequest(enc({ height: 9, id, index: 0 })), { height: 9, id, index: 0 });
  t.deepEqual(parseSnapshotPartRequest(enc({ height: 9, id, index: 'manifest' })), { height: 9, id, index: 'manifest' });
  for (const bad of [
    { height: 0, id, index: 0 },
    { height: '9', id, index: 0 },
    { height: 9, id: 'AB'.repeat(32), index: 0 },
    { height: 9, id: 'ab', index: 0 },
    { height: 9, id, index: -1 },
    { height: 9, id, index: 1.5 },
    { height: 9, id, index: 'chunk' },
    { height: 9, id },
    [9, id, 0],
  ])
    t.throws(() => parseSnapshotPartRequest(enc(bad)), { instanceOf: RequestAbuse }, JSON.stringify(bad));
  const largest = enc({ height: Number.MAX_SAFE_INTEGER, id, index: Number.MAX_SAFE_INTEGER });
  t.true(largest.length <= 160, `${largest.length} bytes`);
  const offer = { height: 3, block_hash: id, state_root: id, id, chunks: 2 };
  t.deepEqual(parseSnapshotOffers(enc([offer])), [offer]);
  t.throws(() => parseSnapshotOffers(enc([{ ...offer, chunks: -1 }])), { message: /snapshot offer/ });
  t.throws(() => parseSnapshotOffers(enc(Array(17).fill(offer))), { message: /at most 16/ });
});

/** Write one request frame and read the one response frame (single-frame protocols). */
async function oneFrame(stream: Stream, request: Uint8Array): Promise<Uint8Array> {
  const lp = lpStream(stream);
  await lp.write(request);
  return (await lp.read({ signal: AbortSignal.timeout(20_000) })).subarray();
}

test('a node lists its snapshots, serves the manifest and every chunk; the other verifies each and restores the state', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots: dir, manifest } = await chainSnapshot(tmp.dir, 6);
  t.teardown(() => db.close());
  t.true(manifest.chunks.length > 2);
  const penalties: string[] = [];
  const server = snapshotHost({ snapshots: snapshotSource(dir), penalties });
  await server.start();
  t.teardown(() => server.stop());
  const client = snapshotHost({ peers: [addrOf(server)] });
  await client.start();
  t.teardown(() => client.stop());
  await waitFor(() => client.connectedPeerIds().includes(server.peerId), 20_000, 'handshake');

  const offers = await client.requestSnapshots(server.peerId);
  const id = manifestId(manifest);
  t.deepEqual(offers, [{ height: 6, block_hash: head.hash, state_root: head.state_root, id, chunks: manifest.chunks.length }]);
  const got = decodeManifest(
    (await client.requestSnapshotPart(server.peerId, { height: 6, id, index: 'manifest' })) as Uint8Array,
  );
  verifyManifest(got, head.state_root);
  t.is(manifestId(got), id);

  const fresh = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => fresh.close());
  const restorer = await SnapshotRestorer.open(fresh, got, head.state_root);
  await Promise.all(
    restorer.missing().map(async (i) => {
      const bytes = await client.requestSnapshotPart(server.peerId, { height: 6, id, index: i });
      t.truthy(bytes, `chunk ${i}`);
      verifyChunk(got, i, Buffer.from(bytes as Uint8Array));
      await restorer.addChunk(i, Buffer.from(bytes as Uint8Array));
    }),
  );
  t.is((await restorer.finish()).root().toString('hex'), head.state_root);

  // Parts not held: another id, a chunk past the end, another height.
  t.is(await client.requestSnapshotPart(server.peerId, { height: 6, id: 'ee'.repeat(32), index: 0 }), null);
  t.is(await client.requestSnapshotPart(server.peerId, { height: 6, id, index: manifest.chunks.length }), null);
  t.is(await client.requestSnapshotPart(server.peerId, { height: 5, id, index: 0 }), null);
  t.deepEqual(penalties, [], 'honest requests cost nothing');
});

test('a malformed snapshot-chunk request is refused and penalized; a node without snapshots offers none', async (t) => {
  const penalties: string[] = [];
  const server = snapshotHost({ penalties });
  await server.start();
  t.teardown(() => server.stop());
  const raw = await startRawPeer({ chainId: CHAIN_ID, genesisHash: GENESIS, target: addrOf(server), status: 'silent' });
  t.teardown(() => raw.stop());
  await rawHandshake(raw, CHAIN_ID, GENESIS);
  t.deepEqual(parseSnapshotOffers(await oneFrame(await raw.open('snapshots'), enc({}))), []);
  await t.throwsAsync(oneFrame(await raw.open('snapshot-chunk'), enc({ height: 1, id: 'x', index: 0 })));
  await waitFor(() => penalties.some((r) => /snapshot-chunk request: id must be 64 hex/.test(r)), 10_000, 'penalty');
  t.pass();
});
