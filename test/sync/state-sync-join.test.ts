/**
 * Joining by state sync over a real snapshot directory and a real RocksDB (the network is two in-process
 * peers serving that directory and the maker's blocks): the restored store opens as a chain whose head is the
 * snapshot block, answers the state there, refuses reads below it, and imports the next blocks.
 */
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { type Block, Chain, HistoryUnavailableError, encodeBlock } from '../../ts/chain/index.js';
import type { SnapshotOffer } from '../../ts/network/index.js';
import { SnapshotRestorer, SnapshotSchedule, decodeManifest, snapshotSource } from '../../ts/snapshot/index.js';
import { getAccount } from '../../ts/state/index.js';
import { P, openRocksStore, prefixEnd } from '../../ts/storage/index.js';
import {
  type StateSyncNetwork,
  type StateSyncStatus,
  type TrustedSets,
  genesisTrustedSets,
  joinByStateSync,
} from '../../ts/sync/index.js';
import { bftParams, nextFinalized } from '../helpers/bft-blocks.js';
import { NOW, alice, bob, openFixtureChain, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

const INTERVAL = 4;

async function makerWithSnapshot(dir: string) {
  const params = bftParams('testnet');
  const maker = await openFixtureChain(dir, params);
  // Cut finely: several chunks, so a restore can stop halfway.
  const limits = { subtreeMaxBytes: 1, chunkTargetBytes: 400, spillBytes: 64 };
  const schedule = new SnapshotSchedule(maker.chain, maker.db, { dataDir: dir, interval: INTERVAL, keep: 2, limits });
  const blocks: Block[] = [];
  for (let i = 0; i < 10; i++) {
    blocks.push(await nextFinalized(maker.chain, [transfer(alice, BigInt(i), { amount: 1000n + BigInt(i) })]));
    await schedule.idle();
  }
  const atGenesis = await maker.chain.stateAt(0);
  const trustedSets: TrustedSets = genesisTrustedSets(params, atGenesis);
  atGenesis.release();
  return { params, ...maker, schedule, blocks, trustedSets };
}

/** The maker (its teardown registered) and a fresh store to join into. */
async function makerAndFreshStore(t: ExecutionContext) {
  const src = tempDir();
  const dst = tempDir();
  t.teardown(() => {
    src.cleanup();
    dst.cleanup();
  });
  const maker = await makerWithSnapshot(src.dir);
  t.teardown(async () => {
    await maker.schedule.stop();
    await maker.db.close();
  });
  const db = await openRocksStore(join(dst.dir, 'db'));
  t.teardown(() => db.close());
  return { maker, db };
}

/** Peers serving `source` and the maker's blocks; `corrupt` peers flip a byte of every chunk. */
function network(
  maker: { chain: Chain; schedule: SnapshotSchedule },
  peers: string[],
  corrupt: string[] = [],
): StateSyncNetwork & { penalties: string[] } {
  const source = snapshotSource(maker.schedule.directory);
  const penalties: string[] = [];
  return {
    penalties,
    connectedPeerIds: () => peers,
    requestSnapshots: (): Promise<SnapshotOffer[]> => source.offers(),
    requestSnapshotPart: async (peer, req) => {
      const bytes = await source.part(req.height, req.id, req.index);
      if (bytes === null || req.index === 'manifest' || !corrupt.includes(peer)) return bytes;
      const bad = Uint8Array.from(bytes);
      bad[bad.length - 1] ^= 1;
      return bad;
    },
    requestBlocks: async (_peer, from, count) => {
      const out: Uint8Array[] = [];
      for (let h = from; h < from + count && h <= maker.chain.height; h++)
        out.push(encodeBlock((await maker.chain.blocks.getBlock(h)) as Block));
      return out;
    },
    penalize: (peer) => penalties.push(peer),
  };
}

test('a fresh store joins at the newest snapshot offered by two peers, opens as a chain there and imports the blocks after it', async (t) => {
  const { maker, db } = await makerAndFreshStore(t);
  t.deepEqual(maker.schedule.directory.heights(), [8, 4]);
  const net = network(maker, ['honest-1', 'honest-2', 'liar'], ['liar']);
  const statuses: StateSyncStatus[] = [];
  const genesis = (await maker.chain.blocks.getBlock(0)) as Block;
  const head = await joinByStateSync({
    db,
    net,
    genesis,
    params: maker.params,
    trustedSets: maker.trustedSets,
    onStatus: (s) => statuses.push(s),
  });
  t.is(head.index, 8);
  t.is(head.hash, maker.blocks[7].hash);
  t.deepEqual(statuses.at(-1)?.phase, 'done');
  t.true(statuses.some((s) => s.phase === 'fetching' && s.snapshot_height === 8));
  t.true(
    net.penalties.every((p) => p === 'liar'),
    'only the peer sending corrupt chunks is penalized',
  );

  const chain = new Chain(maker.params, db, 64);
  chain.now = () => NOW;
  await chain.open();
  t.is(chain.height, 8);
  t.is(chain.blocks.earliest, 8);
  t.is(chain.state.root().toString('hex'), head.state_root);
  // Bob's balance at 8, as the maker's history answers it.
  const at8 = await maker.chain.stateAt(8);
  t.is(getAccount(chain.state, bob.address).balance, getAccount(at8, bob.address).balance);
  at8.release();
  const below = await t.throwsAsync(chain.stateAt(7), { instanceOf: HistoryUnavailableError });
  t.regex(below?.message ?? '', /8/);
  t.is(await chain.blocks.getBlock(5), null, 'no block below the snapshot');
  t.is((await chain.blocks.getBlock(0))?.hash, genesis.hash, 'genesis is kept for the handshake');
  // Block sync continues from the snapshot height.
  await chain.importBlock(maker.blocks[8]);
  await chain.importBlock(maker.blocks[9]);
  t.is(chain.head.hash, maker.blocks[9].hash);
  t.is(chain.state.root().toString('hex'), maker.blocks[9].state_root);
  await chain.blocks.history.close();
});

test('with a trusted block only its snapshot is restored; a store that already holds a chain is refused', async (t) => {
  const { maker, db } = await makerAndFreshStore(t);
  const net = network(maker, ['a', 'b']);
  const genesis = (await maker.chain.blocks.getBlock(0)) as Block;
  const trust = { height: 4, hash: maker.blocks[3].hash };
  const head = await joinByStateSync({ db, net, genesis, params: maker.params, trustedSets: maker.trustedSets, trust });
  t.is(head.index, 4);
  t.is(head.hash, trust.hash);
  await t.throwsAsync(joinByStateSync({ db, net, genesis, params: maker.params, trustedSets: maker.trustedSets, trust }), {
    name: 'RestoreRefusedError',
  });
});

test('a restart mid-restore resumes while its snapshot is offered, and starts over cleanly when it is not', async (t) => {
  const { maker, db } = await makerAndFreshStore(t);
  const net = network(maker, ['a', 'b']);
  const genesis = (await maker.chain.blocks.getBlock(0)) as Block;
  const source = snapshotSource(maker.schedule.directory);
  const [newest, older] = await source.offers();
  // An earlier run wrote the older snapshot's chunks and died before finishing.
  const manifest = decodeManifest((await source.part(older.height, older.id, 'manifest')) as Uint8Array);
  const partial = await SnapshotRestorer.open(db, manifest, older.state_root);
  for (const i of partial.missing())
    await partial.addChunk(i, Buffer.from((await source.part(older.height, older.id, i)) as Uint8Array));
  t.is(await SnapshotRestorer.inProgress(db), older.id);
  const resumed = await joinByStateSync({ db, net, genesis, params: maker.params, trustedSets: maker.trustedSets });
  t.is(resumed.index, older.height, 'the snapshot in progress is resumed, not the newest');

  // Another fresh store, whose unfinished restore is of a snapshot the peers no longer offer (trust names the newest).
  const other = await openRocksStore(join(tempDirFor(t), 'db'));
  t.teardown(() => other.close());
  const stale = await SnapshotRestorer.open(other, manifest, older.state_root);
  await stale.addChunk(0, Buffer.from((await source.part(older.height, older.id, 0)) as Uint8Array));
  const lines: string[] = [];
  const head = await joinByStateSync({
    db: other,
    net,
    genesis,
    params: maker.params,
    trustedSets: maker.trustedSets,
    trust: { height: newest.height, hash: newest.block_hash },
    log: (_f, msg) => lines.push(msg),
  });
  t.is(head.index, newest.height);
  t.true(lines.some((l) => l.includes('starting over')));
  const chain = new Chain(maker.params, other, 64);
  await chain.open();
  t.is(chain.state.root().toString('hex'), newest.state_root);
  const newestManifest = decodeManifest((await source.part(newest.height, newest.id, 'manifest')) as Uint8Array);
  const table = Buffer.from([P.state]);
  const rows = await other.range({ gte: table, lt: prefixEnd(table) });
  t.is(rows.length, newestManifest.entries, 'no entry of the discarded restore is left');
  await chain.blocks.history.close();
});

function tempDirFor(t: ExecutionContext): string {
  const d = tempDir();
  t.teardown(d.cleanup);
  return d.dir;
}

test('a snapshot its peers offer but do not serve (no block, or no chunk) is given up and an older one restored', async (t) => {
  const { maker, db } = await makerAndFreshStore(t);
  const genesis = (await maker.chain.blocks.getBlock(0)) as Block;
  const honest = network(maker, ['a', 'b']);
  // The newest (8): its block is not served. The join used to ask for it every round, for good.
  const noBlock: StateSyncNetwork = {
    ...honest,
    requestBlocks: async (peer, from, count) => (from === 8 ? [] : honest.requestBlocks(peer, from, count)),
  };
  const head = await joinByStateSync({
    db,
    net: noBlock,
    genesis,
    params: maker.params,
    trustedSets: maker.trustedSets,
    retryMs: 10,
  });
  t.is(head.index, 4);

  // The newest is offered but only its first chunk served (the peers pruned it meanwhile): given up (the fetch
  // used to end the join with an error), the restore started over with the older one.
  const other = await openRocksStore(join(tempDirFor(t), 'db'));
  t.teardown(() => other.close());
  const noChunks: StateSyncNetwork = {
    ...honest,
    requestSnapshotPart: async (peer, req) =>
      req.height === 8 && req.index !== 'manifest' && req.index > 0 ? null : honest.requestSnapshotPart(peer, req),
  };
  const lines: string[] = [];
  const again = await joinByStateSync({
    db: other,
    net: noChunks,
    genesis,
    params: maker.params,
    trustedSets: maker.trustedSets,
    retryMs: 10,
    log: (_f, msg) => lines.push(msg),
  });
  t.is(again.index, 4);
  t.true(lines.includes('state sync: no peer left for the snapshot; choosing another'));
  t.true(lines.includes('state sync: the unfinished restore is no longer offered; starting over'));
  const chain = new Chain(maker.params, other, 64);
  await chain.open();
  t.is(chain.state.root().toString('hex'), again.state_root);
  await chain.blocks.history.close();
});
