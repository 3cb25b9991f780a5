/**
 * A real node process with `--snapshot-interval` serves its snapshots over `P/snapshots/1` and
 * `P/snapshot-chunk/1`: a libp2p peer of the same network lists them, fetches a manifest and every chunk,
 * verifies them against the block the node's API reports, and restores the state.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { genesisIdentity, readGenesisFile } from '../../ts/chain/index.js';
import { P2PNetwork } from '../../ts/network/index.js';
import { generateTestnet } from '../../ts/node/index.js';
import { SnapshotRestorer, decodeManifest, manifestId, verifyChunk, verifyManifest } from '../../ts/snapshot/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { type Running, freeBasePort, height, startNode, stopAll, tail } from '../helpers/devnet.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const CHAIN_ID = 7120;
const INTERVAL = 4;
const strip0x = (h: string): string => h.replace(/^0x/, '');

test('a node taking snapshots every 4 blocks serves them to a peer, which verifies every chunk and restores the state', async (t) => {
  t.timeout(180_000);
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(1);
  const [a] = generateTestnet({
    validators: 1,
    fullNodes: 0,
    out: join(tmp.dir, 'net'),
    basePort: base,
    chainId: CHAIN_ID,
    dposBftHeight: 10,
    blockTimeMs: 300,
  });
  const procs: Running[] = [startNode(a, ['--snapshot-interval', String(INTERVAL), '--snapshot-keep', '2'])];
  t.teardown(() => stopAll(procs));
  const peerId = (await waitFor(
    async () => (await httpJson(`${a.api_url}/net/peers`).catch(() => null))?.body.peer_id,
    90_000,
    'node listening',
  )) as string;
  await waitFor(async () => (await height(a.api_url)) >= 2 * INTERVAL + 1, 90_000, 'two snapshot heights passed');
  const genesisBlock = (await httpJson(`${a.api_url}/chain/blocks/0`)).body.hash as string;
  const identity = genesisIdentity(readGenesisFile(join(dirname(a.data_dir), 'genesis.json')), genesisBlock);

  const client = new P2PNetwork({
    nodeKey: randomBytes(32),
    host: '127.0.0.1',
    port: 0,
    peers: [`/ip4/127.0.0.1/tcp/${a.p2p_port}/p2p/${peerId}`],
    chainId: CHAIN_ID,
    genesisHash: identity,
    status: () => ({ chain_id: CHAIN_ID, genesis_hash: identity, head_height: 0, head_hash: '00'.repeat(32) }),
    blocks: async () => [],
    onTransaction: async () => undefined,
    onBlock: async () => 'ignore',
    log: pino({ level: 'silent' }),
  });
  await client.start();
  t.teardown(() => client.stop());
  await waitFor(() => client.connectedPeerIds().includes(peerId), 60_000, 'handshake with the node');

  const offers = await waitFor(
    async () => {
      const o = await client.requestSnapshots(peerId).catch(() => []);
      return o.length === 2 ? o : null;
    },
    60_000,
    'two snapshots offered',
  ).catch((err) => {
    t.log(tail(procs[0]));
    throw err;
  });
  t.true(offers[0].height > offers[1].height, 'newest first');
  t.true(offers.every((o) => o.height % INTERVAL === 0));
  const offer = offers[0];
  const block = (await httpJson(`${a.api_url}/chain/blocks/${offer.height}`)).body as { hash: string; state_root: string };
  t.is(offer.block_hash, strip0x(block.hash));
  t.is(offer.state_root, strip0x(block.state_root));

  const bytes = await client.requestSnapshotPart(peerId, { height: offer.height, id: offer.id, index: 'manifest' });
  const manifest = decodeManifest(bytes as Uint8Array);
  t.is(manifestId(manifest), offer.id);
  verifyManifest(manifest, strip0x(block.state_root));
  const fresh = await openRocksStore(join(tmp.dir, 'fresh'));
  t.teardown(() => fresh.close());
  const restorer = await SnapshotRestorer.open(fresh, manifest, strip0x(block.state_root));
  await Promise.all(
    restorer.missing().map(async (i) => {
      const chunk = Buffer.from(
        (await client.requestSnapshotPart(peerId, { height: offer.height, id: offer.id, index: i })) as Uint8Array,
      );
      verifyChunk(manifest, i, chunk);
      await restorer.addChunk(i, chunk);
    }),
  );
  t.is((await restorer.finish()).root().toString('hex'), strip0x(block.state_root));
  t.false(procs[0].logs.join('').includes('"msg":"peer penalized"'), 'the honest peer was not penalized');
});
