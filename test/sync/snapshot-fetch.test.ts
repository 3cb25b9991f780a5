/**
 * State sync's chunk fetching between real libp2p hosts on 127.0.0.1: chunks of a real chain's snapshot come
 * in parallel from several peers, each verified on arrival; a peer serving corrupt chunks is penalized and its
 * chunks fetched elsewhere, one lacking them is asked for others, one that vanishes mid-transfer is left out.
 */
import { join } from 'node:path';
import test from 'ava';
import type { P2PNetwork, SnapshotSource } from '../../ts/network/index.js';
import { type SnapshotManifest, SnapshotRestorer, manifestId, snapshotSource } from '../../ts/snapshot/index.js';
import { openRocksStore, P, prefixEnd } from '../../ts/storage/index.js';
import {
  BAD_CHUNK_PENALTY,
  type SnapshotFetchProgress,
  SnapshotPeersExhaustedError,
  fetchSnapshotChunks,
} from '../../ts/sync/index.js';
import { addrOf, chainSnapshot, corruptingSource, snapshotHost } from '../helpers/snapshot-peers.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** Holds the manifest but no chunk. */
const lacking = (honest: SnapshotSource): SnapshotSource => ({
  offers: () => honest.offers(),
  part: async (height, id, index) => (index === 'manifest' ? honest.part(height, id, index) : null),
});

async function servers(sources: SnapshotSource[]): Promise<{ hosts: P2PNetwork[]; client: P2PNetwork }> {
  const hosts = sources.map((s) => snapshotHost({ snapshots: s }));
  await Promise.all(hosts.map((h) => h.start()));
  const client = snapshotHost({ peers: hosts.map(addrOf) });
  await client.start();
  await waitFor(() => hosts.every((h) => client.connectedPeerIds().includes(h.peerId)), 30_000, 'handshakes');
  return { hosts, client };
}

const fetcher = (client: P2PNetwork, m: SnapshotManifest) => (peer: string, index: number) =>
  client.requestSnapshotPart(peer, { height: m.height, id: manifestId(m), index });

test('chunks from several peers: the corrupt one is penalized and refetched elsewhere, the lacking one unblamed', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots, manifest } = await chainSnapshot(tmp.dir, 8);
  t.teardown(() => db.close());
  const honest = snapshotSource(snapshots);
  const { hosts, client } = await servers([corruptingSource(honest), lacking(honest), honest, honest]);
  t.teardown(() => Promise.all([client, ...hosts].map((h) => h.stop())).then(() => undefined));
  const [bad, empty] = hosts.map((h) => h.peerId);

  const fresh = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => fresh.close());
  const restorer = await SnapshotRestorer.open(fresh, manifest, head.state_root);
  const penalties: { peer: string; points: number; reason: string }[] = [];
  const progress: SnapshotFetchProgress[] = [];
  await fetchSnapshotChunks({
    restorer,
    peers: hosts.map((h) => h.peerId),
    fetch: fetcher(client, manifest),
    penalize: (peer, points, reason) => penalties.push({ peer, points, reason }),
    onProgress: (p) => progress.push(p),
  });
  t.true(restorer.complete);
  t.is((await restorer.finish()).root().toString('hex'), head.state_root);
  t.deepEqual(
    penalties.map((p) => [p.peer, p.points]),
    [[bad, BAD_CHUNK_PENALTY]],
    'only the corrupt peer, once (it is dropped from the fetch)',
  );
  t.regex(penalties[0].reason, /snapshot chunk \d+ is invalid/);
  t.false(
    penalties.some((p) => p.peer === empty),
    'a peer lacking chunks is not blamed',
  );
  const last = progress.at(-1);
  t.is(last?.done, manifest.chunks.length);
  t.is(last?.total, manifest.chunks.length);
  t.is(last?.etaSec, 0);
});

test('no honest peer: the fetch ends with the chunks still missing and nothing corrupt written', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots, manifest } = await chainSnapshot(tmp.dir, 4);
  t.teardown(() => db.close());
  const honest = snapshotSource(snapshots);
  const { hosts, client } = await servers([corruptingSource(honest), lacking(honest)]);
  t.teardown(() => Promise.all([client, ...hosts].map((h) => h.stop())).then(() => undefined));
  const fresh = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => fresh.close());
  const restorer = await SnapshotRestorer.open(fresh, manifest, head.state_root);
  const err = await t.throwsAsync(
    fetchSnapshotChunks({
      restorer,
      peers: hosts.map((h) => h.peerId),
      fetch: fetcher(client, manifest),
      penalize: () => undefined,
    }),
    { instanceOf: SnapshotPeersExhaustedError },
  );
  t.is(err?.missing.length, manifest.chunks.length);
  const S = Buffer.from([P.state]);
  t.deepEqual(await fresh.range({ gte: S, lt: prefixEnd(S) }), []);
});

test('a peer that vanishes mid-transfer is left out; the others finish', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { db, head, snapshots, manifest } = await chainSnapshot(tmp.dir, 8);
  t.teardown(() => db.close());
  const honest = snapshotSource(snapshots);
  let vanishing: P2PNetwork | null = null;
  let served = 0;
  const vanishes: SnapshotSource = {
    offers: () => honest.offers(),
    async part(height, id, index) {
      if (index !== 'manifest' && ++served === 2) void vanishing?.stop();
      return honest.part(height, id, index);
    },
  };
  const { hosts, client } = await servers([vanishes, honest]);
  vanishing = hosts[0];
  t.teardown(() => Promise.all([client, hosts[1]].map((h) => h.stop())).then(() => undefined));
  const fresh = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => fresh.close());
  const restorer = await SnapshotRestorer.open(fresh, manifest, head.state_root);
  const penalties: string[] = [];
  await fetchSnapshotChunks({
    restorer,
    peers: hosts.map((h) => h.peerId),
    fetch: fetcher(client, manifest),
    penalize: (peer) => penalties.push(peer),
  });
  t.is((await restorer.finish()).root().toString('hex'), head.state_root);
  t.deepEqual(penalties, [], 'vanishing is not misbehaviour');
  t.true(served >= 2);
});
