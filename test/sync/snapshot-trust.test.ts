/**
 * The light-client check of a state sync snapshot block (ts/sync/snapshot-trust.ts) on real chains (RocksDB in a
 * temp dir, real signatures): before the chunks, more than 1/3 of the genesis-trusted power must have signed the
 * block (its justification and the next block's last_commit together), a trusted validator's forged precommit
 * blames the peer; after the restore, the validator set the block's own state holds must finalize it (3/4).
 */
import test from 'ava';
import { type Block, PRESET_ACTIVATION, decodeBlock, encodeBlock } from '../../ts/chain/index.js';
import { BASE_PER_COIN, randomKeyPair } from '../../ts/ledger/index.js';
import { putActiveSet } from '../../ts/modules/index.js';
import { StateOverlay } from '../../ts/state/index.js';
import { trustHint, checkSnapshotBlock, finalityProblem, genesisTrustedSets, snapshotCertificates } from '../../ts/sync/index.js';
import { toHex } from '../../ts/util/index.js';
import { bftKeys, bftParams, certificate, nextFinalized } from '../helpers/bft-blocks.js';
import { NOW, alice, fixtureParams, openFixtureChain, proposerKey, transfer, validatorKeys } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

/** A four-validator BFT chain of four finalized blocks (three of four sign each), with its genesis-trusted sets. */
async function bftChain(t: import('ava').ExecutionContext) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const params = bftParams('testnet');
  const { chain, db } = await openFixtureChain(tmp.dir, params);
  t.teardown(async () => {
    await chain.blocks.history.close();
    await db.close();
  });
  const trusted = genesisTrustedSets(params, chain.state)(1);
  const blocks: Block[] = [];
  for (let i = 0; i < 4; i++) blocks.push(await nextFinalized(chain, [transfer(alice, BigInt(i))]));
  return { params, chain, trusted, blocks };
}

const withCertificate = (b: Block, cert: Uint8Array): Block => ({ ...b, justification: cert });

test('an honest BFT snapshot block is certified by the trusted set before the restore and finalized by its own state after', async (t) => {
  const { params, chain, trusted, blocks } = await bftChain(t);
  t.is(trusted.length, 4);
  const [, , h, next] = blocks;
  // As served over P/blocks/1: encoded and decoded again.
  const served = decodeBlock(encodeBlock(h));
  const verdict = checkSnapshotBlock(params, trusted, served, decodeBlock(encodeBlock(next)));
  t.is(verdict.kind, 'proven');
  t.regex(verdict.kind === 'proven' ? verdict.detail : '', /3 of the 4 voting power/);
  // Its state (the chain's own, at h) holds the set that finalized it.
  const at = await chain.stateAt(h.index);
  t.is(finalityProblem(params, at, served, snapshotCertificates(served, next)), null);
  // The last block has no child yet: its justification alone.
  t.is(finalityProblem(params, chain.state, next, snapshotCertificates(next, null)), null);
  at.release();
});

test('a certificate with too few trusted signers is unproven, and the next block’s last_commit can make up the power', async (t) => {
  const { params, chain, trusted, blocks } = await bftChain(t);
  const [, , h, next] = blocks;
  const one = withCertificate(h, certificate(params, h, bftKeys.slice(0, 1)));
  const alone = checkSnapshotBlock(params, trusted, one, null);
  t.is(alone.kind, 'unproven', '1 of 4 is not more than 1/3');
  t.regex(alone.kind === 'unproven' ? alone.reason : '', /1 of the 4 voting power.*more than 1\/3/);
  // next's last_commit (three other signers, another copy) adds its power: distinct signers count once.
  t.is(checkSnapshotBlock(params, trusted, one, next).kind, 'proven');
  // A "next" that is not h's child adds nothing.
  t.is(checkSnapshotBlock(params, trusted, one, { ...next, previous_hash: '00'.repeat(32) }).kind, 'unproven');
  // Signers the node does not know (the set moved on since genesis): unproven, nobody blamed.
  const strangers = [randomKeyPair(), randomKeyPair(), randomKeyPair(), randomKeyPair()];
  const moved = checkSnapshotBlock(params, trusted, withCertificate(h, certificate(params, h, strangers)), null);
  t.is(moved.kind, 'unproven');
  t.regex(trustHint(8), /--state-sync-trust 8:HASH with the hash of block 8/);
  // 2 of 4 pass the light-client check but are no quorum of the state's set: the finality rule refuses them.
  const two = withCertificate(h, certificate(params, h, bftKeys.slice(0, 2)));
  t.is(checkSnapshotBlock(params, trusted, two, null).kind, 'proven');
  const at = await chain.stateAt(h.index);
  t.regex(finalityProblem(params, at, two, snapshotCertificates(two, null)) ?? '', /2 of 4 voting power, 3\/4 needed/);
  at.release();
});

test('a forged precommit of a trusted validator, a missing certificate or a phase the height cannot have is forged', async (t) => {
  const { params, trusted, blocks } = await bftChain(t);
  const [, g, h] = blocks;
  // Real precommits of trusted validators, but for another block (g): under h they do not verify.
  const other = certificate(params, g, bftKeys.slice(0, 3));
  t.is(checkSnapshotBlock(params, trusted, withCertificate(g, other), null).kind, 'proven', 'sanity: g’s own certificate');
  const moved = checkSnapshotBlock(params, trusted, withCertificate(h, other), null);
  t.is(moved.kind, 'forged');
  t.regex(moved.kind === 'forged' ? moved.reason : '', /does not verify/);
  const bare = checkSnapshotBlock(params, trusted, withCertificate(h, new Uint8Array(0)), null);
  t.is(bare.kind, 'forged', 'a BFT block served without its certificate');
  const poa = checkSnapshotBlock(params, trusted, { ...h, consensus: 'PoA', justification: new Uint8Array(0) }, null);
  t.is(poa.kind, 'forged', 'PoA after the DPoS+BFT activation');
  t.is(checkSnapshotBlock(params, trusted, withCertificate(h, Uint8Array.of(0xc0)), null).kind, 'forged');
});

test('a state whose validator set did not certify the block is refused by the finality rule', async (t) => {
  const { params, chain, blocks } = await bftChain(t);
  const h = blocks[2];
  const at = await chain.stateAt(h.index);
  // The same state but for the active set: four other validators of the same power.
  const strangers = [randomKeyPair(), randomKeyPair(), randomKeyPair(), randomKeyPair()];
  const other = new StateOverlay(at);
  putActiveSet(other, {
    epoch: 0,
    members: strangers.map((k, i) => ({ address: k.address, name: `s${i}`, public_key: toHex(k.publicKey), power: 1n })),
  });
  const problem = finalityProblem(params, other, h, snapshotCertificates(h, null));
  t.regex(problem ?? '', /no certificate of block 3 is a quorum of the validator set its restored state holds/);
  // A set of three: the state makes the height DPoS without BFT, the block says DPoS+BFT.
  const three = new StateOverlay(at);
  putActiveSet(three, {
    epoch: 0,
    members: bftKeys
      .slice(0, 3)
      .map((k, i) => ({ address: k.address, name: `v${i}`, public_key: toHex(k.publicKey), power: 1n })),
  });
  t.regex(finalityProblem(params, three, h, snapshotCertificates(h, null)) ?? '', /makes block 3 a DPoS block/);
  // Garbage under the staking records (a forged state may hold anything): a refusal, not a crash.
  for (const key of [...three.changes.keys()]) three.set(key, Buffer.from('not a validator set'));
  t.regex(finalityProblem(params, three, h, snapshotCertificates(h, null)) ?? '', /validator set at 3 does not decode/);
  at.release();
});

test('a PoA snapshot block is proven by its proposer’s signature, a validator of the genesis set', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const params = { ...fixtureParams(), activation: { ...PRESET_ACTIVATION.dev, dposBft: 1_000 } };
  const { chain, db } = await openFixtureChain(tmp.dir, params);
  t.teardown(async () => {
    await chain.blocks.history.close();
    await db.close();
  });
  const trusted = genesisTrustedSets(params, chain.state)(1);
  for (let i = 0; i < 3; i++) await chain.commit(await chain.propose([], proposerKey(params, chain.height + 1), NOW));
  const h = chain.head;
  t.is(h.consensus, 'PoA');
  t.is(checkSnapshotBlock(params, trusted, h, null).kind, 'proven');
  t.is(finalityProblem(params, chain.state, h, []), null);
  // Signed by someone outside the set: unproven; a set member's name on another key's signature: forged.
  const stranger = randomKeyPair();
  const strangers = { ...h, validator: stranger.address };
  t.is(checkSnapshotBlock(params, trusted, strangers, null).kind, 'unproven');
  const other = validatorKeys.find((k) => k.address !== h.validator);
  t.truthy(other);
  const misnamed = { ...h, validator: other?.address ?? '' };
  t.is(checkSnapshotBlock(params, trusted, misnamed, null).kind, 'forged');
  t.regex(finalityProblem(params, chain.state, strangers, []) ?? '', /not a validator of the restored state's set/);
  t.is(checkSnapshotBlock(params, trusted, { ...h, consensus: 'DPoS+BFT' }, null).kind, 'forged', 'BFT before its activation');
});

test('the genesis-trusted sets: the PoA authorities before the DPoS+BFT activation, the staked set from it', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = bftParams('testnet');
  const stake = 20_000n * BASE_PER_COIN;
  const params = {
    ...base,
    activation: { ...base.activation, dposBft: 10 },
    validators: base.validators.map((v, i) => ({ ...v, stake: stake + BigInt(i) })),
  };
  const { chain, db } = await openFixtureChain(tmp.dir, params);
  t.teardown(async () => {
    await chain.blocks.history.close();
    await db.close();
  });
  const sets = genesisTrustedSets(params, chain.state);
  t.deepEqual(
    sets(9).map((v) => v.power),
    [1n, 1n, 1n, 1n],
  );
  t.deepEqual(
    sets(10)
      .map((v) => v.power)
      .sort(),
    [stake, stake + 1n, stake + 2n, stake + 3n].sort(),
  );
  t.is(sets(1_000_000), sets(10));
  t.deepEqual(
    sets(9).map((v) => v.address),
    bftKeys.map((k) => k.address).sort(),
  );
});
