/**
 * Joining by state sync when peers offer snapshots of other histories (real snapshot directories, real RocksDB,
 * real signatures; in-process peers): a forger holding 2 of the 4 genesis validators (more than 1/3) passes the
 * light-client check but its restored state does not finalize its block, so the restore is discarded, its
 * offerers penalized and the honest snapshot restored; a chain whose validator set has moved entirely away from
 * the genesis set is refused with the hint to give --state-sync-trust, and restored once the operator does.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { type Block, type ChainParams, encodeBlock } from '../../ts/chain/index.js';
import { BASE_PER_COIN, type KeyPair, keyPairFromMnemonic } from '../../ts/ledger/index.js';
import type { SnapshotOffer } from '../../ts/network/index.js';
import { SnapshotAbort, SnapshotDirectory, SnapshotRestorer, snapshotSource, startSnapshot } from '../../ts/snapshot/index.js';
import { StateStore, getAccount } from '../../ts/state/index.js';
import { type KvStore, P, openRocksStore, prefixEnd } from '../../ts/storage/index.js';
import {
  type StateSyncNetwork,
  type StateSyncOptions,
  type StateSyncStatus,
  genesisTrustedSets,
  joinByStateSync,
} from '../../ts/sync/index.js';
import { bftKeys, bftParams, nextFinalized } from '../helpers/bft-blocks.js';
import { alice, bob, fixtureParams, openFixtureChain, transfer } from '../helpers/chain-fixture.js';
import { tempDir, waitFor } from '../helpers/util.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const strangers = [10, 11, 12, 13].map((i) => keyPairFromMnemonic(MNEMONIC, i));
const INTERVAL = 4;
/** Cut finely: a snapshot of these small states has tens of chunks, of which the validator set is in one or two. */
const FINE = { subtreeMaxBytes: 1, chunkTargetBytes: 1, spillBytes: 64 };

type Maker = Awaited<ReturnType<typeof makeChain>>;

/** A BFT chain of `blocks` finalized blocks by `keys` (precommits of `signers`), a snapshot every 4 blocks (fine cut). */
async function makeChain(t: ExecutionContext, params: ChainParams, blocks: number, keys: KeyPair[], signers: KeyPair[]) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir, params);
  const directory = new SnapshotDirectory(join(tmp.dir, 'snapshots'));
  t.teardown(async () => {
    await chain.blocks.history.close();
    await db.close();
  });
  const made: Block[] = [];
  for (let i = 0; i < blocks; i++) {
    // Each to a new account: a state of a few tens of entries.
    const to = `0x${randomBytes(20).toString('hex')}`;
    made.push(await nextFinalized(chain, [transfer(alice, BigInt(i), { amount: 1000n + BigInt(i), to })], [], keys, signers));
    const b = made[made.length - 1];
    if (b.index % INTERVAL === 0)
      await startSnapshot(
        db,
        { height: b.index, hash: b.hash, stateRoot: b.state_root },
        directory.root,
        new SnapshotAbort(),
        FINE,
      );
  }
  return { params, chain, directory, blocks: made };
}

/** Peers, each serving one chain's snapshots and blocks; `chunkRequests` counts the chunks asked for, by snapshot id. */
function network(
  byPeer: Record<string, Maker>,
  /** Peers that serve every block with its parent's certificate in place of its own (forged precommits). */
  forging: string[] = [],
): StateSyncNetwork & { penalties: string[]; reasons: string[]; chunkRequests: Map<string, number> } {
  const penalties: string[] = [];
  const reasons: string[] = [];
  const chunkRequests = new Map<string, number>();
  const sourceOf = (peer: string) => snapshotSource(byPeer[peer].directory);
  return {
    penalties,
    reasons,
    chunkRequests,
    connectedPeerIds: () => Object.keys(byPeer),
    requestSnapshots: (peer): Promise<SnapshotOffer[]> => sourceOf(peer).offers(),
    requestSnapshotPart: (peer, req) => {
      if (req.index !== 'manifest') chunkRequests.set(req.id, (chunkRequests.get(req.id) ?? 0) + 1);
      return sourceOf(peer).part(req.height, req.id, req.index);
    },
    requestBlocks: async (peer, from, count) => {
      const { chain } = byPeer[peer];
      const out: Uint8Array[] = [];
      for (let h = from; h < from + count && h <= chain.height; h++) {
        const b = (await chain.blocks.getBlock(h)) as Block;
        const parent = (await chain.blocks.getBlock(h - 1)) as Block;
        out.push(encodeBlock(forging.includes(peer) ? { ...b, justification: parent.justification } : b));
      }
      return out;
    },
    penalize: (peer, _points, reason) => {
      penalties.push(peer);
      reasons.push(reason);
    },
  };
}

async function freshStore(t: ExecutionContext) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const db = await openRocksStore(join(tmp.dir, 'db'));
  t.teardown(() => db.close());
  return db;
}

/** Join `db` through `net` as a node of `chain`'s network (its genesis, parameters and genesis-trusted sets). */
async function joinAs(chain: Maker, db: KvStore, net: StateSyncNetwork, more: Partial<StateSyncOptions> = {}) {
  return joinByStateSync({
    db,
    net,
    genesis: (await chain.chain.blocks.getBlock(0)) as Block,
    params: chain.params,
    trustedSets: await trustedSetsOf(chain),
    retryMs: 20,
    ...more,
  });
}

async function trustedSetsOf(maker: Maker) {
  const at = await maker.chain.stateAt(0);
  const sets = genesisTrustedSets(maker.params, at);
  at.release();
  return sets;
}

test('a snapshot signed by 2 of the 4 genesis validators whose state does not finalize it is discarded; the honest one is restored', async (t) => {
  const honest = await makeChain(t, bftParams('testnet'), 10, bftKeys, bftKeys.slice(0, 3));
  // Two genesis validators and two keys of their own make another history, richer for alice, from their own genesis.
  const forgerKeys = [bftKeys[0], bftKeys[1], strangers[0], strangers[1]];
  const forgerParams: ChainParams = {
    ...fixtureParams(forgerKeys),
    network: 'testnet',
    alloc: new Map([[alice.address, 1_000_000n * BASE_PER_COIN]]),
  };
  const forger = await makeChain(t, forgerParams, 12, forgerKeys, [bftKeys[0], bftKeys[1], strangers[0]]);
  t.deepEqual(forger.directory.heights(), [12, 8, 4], 'the forger offers newer snapshots than the honest peers');
  const net = network({ 'forger-1': forger, 'forger-2': forger, 'honest-1': honest, 'honest-2': honest });
  const db = await freshStore(t);
  const warnings: [Record<string, unknown>, string][] = [];
  const head = await joinAs(honest, db, net, { warn: (f, msg) => warnings.push([f, msg]) });
  t.is(head.hash, honest.blocks[7].hash, 'the honest snapshot at 8');
  const forged = warnings.filter(([, m]) => m === 'state sync: forged snapshot refused');
  // The forged 12 passed the light-client check, was restored and refused (its 8 ties with the honest 8: either
  // may be tried first, and a forged one is refused the same way).
  t.is(forged[0]?.[0].height, 12);
  t.true(forged.every(([f]) => f.height === 12 || f.height === 8));
  t.regex(String(forged[0][0].reason), /does not finalize its block.*no certificate of block 12 is a quorum/);
  // Refused on the chunk holding its validator set, before the rest of its state was fetched.
  const [offer12] = await snapshotSource(forger.directory).offers();
  t.true((offer12?.chunks ?? 0) >= 10, `a finely cut snapshot (${offer12?.chunks} chunks)`);
  t.true(
    (net.chunkRequests.get(offer12.id) ?? 0) <= 2,
    `${net.chunkRequests.get(offer12.id)} chunk(s) of the forged state fetched`,
  );
  t.deepEqual([...new Set(net.penalties)].sort(), ['forger-1', 'forger-2'], 'the offerers of the forged state, and no one else');
  t.true(net.penalties.length >= 2 * forged.length);
  const restored = new StateStore({ db });
  const at8 = await honest.chain.stateAt(8);
  t.is(getAccount(restored, alice.address).balance, getAccount(at8, alice.address).balance, "alice's honest balance");
  t.is(getAccount(restored, bob.address).balance, getAccount(at8, bob.address).balance);
  at8.release();
});

test('a validator set moved away from the genesis set is refused with the --state-sync-trust hint, and restored under trust', async (t) => {
  const honest = await makeChain(t, bftParams('testnet'), 1, bftKeys, bftKeys.slice(0, 3));
  // The chain's validators now: four others, staked, chosen at its epoch boundaries (the set its state holds).
  const movedParams: ChainParams = {
    ...fixtureParams(strangers),
    network: 'testnet',
    epochLength: 4,
    validators: fixtureParams(strangers).validators.map((v) => ({ ...v, stake: 20_000n * BASE_PER_COIN })),
  };
  const moved = await makeChain(t, movedParams, 8, strangers, strangers.slice(0, 3));
  const net = network({ a: moved, b: moved });
  const db = await freshStore(t);
  const warnings: [Record<string, unknown>, string][] = [];
  const stop = new AbortController();
  let status: StateSyncStatus | null = null;
  const joining = joinAs(honest, db, net, {
    onStatus: (st) => {
      status = st;
    },
    warn: (f, msg) => warnings.push([f, msg]),
    signal: stop.signal,
  });
  joining.catch(() => undefined);
  const REFUSED = 'state sync: snapshot refused: its block cannot be verified';
  // Both refused, then the node keeps waiting and repeats the hint.
  await waitFor(
    () => warnings.some(([f, m]) => m.startsWith('state sync: waiting') && f.refused === 2),
    30_000,
    'both snapshots refused, the node still waiting',
  );
  stop.abort();
  await t.throwsAsync(joining, { any: true, name: 'AbortError' });
  const refusals = warnings.filter(([, m]) => m === REFUSED);
  t.deepEqual(
    refusals.map(([f]) => f.height),
    [8, 4],
  );
  t.regex(String(refusals[0][0].reason), /0 of the 4 voting power this node trusts/);
  t.regex(String(refusals[0][0].hint), /--state-sync-trust 8:HASH/);
  const waiting = warnings.find(([f, m]) => m.startsWith('state sync: waiting') && f.refused === 2);
  t.regex(String(waiting?.[0].hint), /--state-sync-trust 4:HASH/);
  t.deepEqual(net.penalties, [], 'nobody lied');
  // /native_status.sync_info.state_sync says why the node is still waiting.
  const shown = status as StateSyncStatus | null;
  t.is(shown?.phase, 'discovering');
  t.deepEqual(
    shown?.refused.map((r) => r.height),
    [8, 4],
  );
  t.regex(shown?.refused[0].hint ?? '', /--state-sync-trust/);
  t.is(await SnapshotRestorer.inProgress(db), null, 'no chunk was fetched');
  const table = Buffer.from([P.state]);
  t.is((await db.range({ gte: table, lt: prefixEnd(table), limit: 1 })).length, 0);

  // The operator vouches for the snapshot block: restored, and its own state's set finalizes it (no warning).
  const trusted: [Record<string, unknown>, string][] = [];
  const head = await joinAs(honest, db, net, {
    trust: { height: 8, hash: moved.blocks[7].hash },
    warn: (f, msg) => trusted.push([f, msg]),
  });
  t.is(head.hash, moved.blocks[7].hash);
  t.deepEqual(trusted, []);
});

test('a peer serving the snapshot block with a forged certificate is penalized and the block taken from another', async (t) => {
  const honest = await makeChain(t, bftParams('testnet'), 8, bftKeys, bftKeys.slice(0, 3));
  const net = network({ liar: honest, 'honest-1': honest, 'honest-2': honest }, ['liar']);
  // The honest peers do not answer the first block request, so the liar is asked whatever the peers' order.
  const serve = net.requestBlocks;
  const asked = new Set<string>();
  net.requestBlocks = async (peer, from, count) => {
    if (peer !== 'liar' && !asked.has(peer)) {
      asked.add(peer);
      return [];
    }
    return serve(peer, from, count);
  };
  const db = await freshStore(t);
  const lines: string[] = [];
  const head = await joinAs(honest, db, net, { log: (_f, msg) => lines.push(msg) });
  t.is(head.hash, honest.blocks[7].hash);
  t.deepEqual([...new Set(net.penalties)], ['liar']);
  t.regex(net.reasons[0], /forged snapshot block 8: the precommit of 0x[0-9a-f]{40} in its certificate does not verify/);
  t.true(lines.includes('state sync: snapshot block verified'));
  t.true(lines.includes("state sync: the snapshot's validator set finalizes its block"));
});
