/**
 * The evidence pool on a real four-validator DPoS+BFT chain (RocksDB in a temp dir, real signatures):
 * what it accepts and refuses, its bounds, and its hand-over to the proposer until a block includes the
 * evidence.
 */
import test, { type ExecutionContext } from 'ava';
import {
  type Chain,
  type DoubleSignEvidence,
  MAX_EVIDENCE_PER_BLOCK,
  PREVOTE,
  type Vote,
  doubleSignEvidence,
  encodeEvidence,
  evidenceId,
  voteDigest,
} from '../../ts/chain/index.js';
import { EvidencePool, type EvidencePoolLimits, InvalidEvidenceError } from '../../ts/consensus/evidence-pool.js';
import { type KeyPair, MIN_SELF_STAKE_BASE, getValidator, keyPairFromMnemonic, signDigest } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { bftKeys, bftParams, nextFinalized } from '../helpers/bft-blocks.js';
import { fixtureParams, openFixtureChain } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

const params = bftParams();
/** Not among the three precommit signers of nextFinalized: the chain goes on whatever happens to it. */
const cheat = bftKeys[3];
const MNEMONIC = 'test test test test test test test test test test test junk';
const outsider = keyPairFromMnemonic(MNEMONIC, 12);

function vote(key: KeyPair, height: number, round: number, blockHash: string): Vote {
  const body = { type: PREVOTE, height, round, block_hash: blockHash } as const;
  return { ...body, validator: key.address, signature: toHex(signDigest(voteDigest(params.chainId, body), key.privateKey)) };
}

/** Two prevotes of `key` for different blocks at one height and round. */
function conflict(height: number, round = 0, key = cheat): DoubleSignEvidence {
  return doubleSignEvidence(vote(key, height, round, 'aa'.repeat(32)), vote(key, height, round, 'bb'.repeat(32)));
}

async function openChain(t: ExecutionContext, chainParams = params): Promise<Chain> {
  const tmp = tempDir();
  const fx = await openFixtureChain(tmp.dir, chainParams);
  t.teardown(async () => {
    await fx.db.close();
    tmp.cleanup();
  });
  return fx.chain;
}

async function poolAt(t: ExecutionContext, height: number, limits: Partial<EvidencePoolLimits> = {}) {
  const chain = await openChain(t);
  for (let i = 0; i < height; i++) await nextFinalized(chain, []);
  return { chain, pool: new EvidencePool(chain, limits) };
}

test('valid double-sign evidence is accepted once; the same conflict again is nothing new', async (t) => {
  const { pool } = await poolAt(t, 1);
  const e = conflict(1);
  t.true(pool.add(e));
  t.false(pool.add(e), 'known');
  t.false(pool.add(doubleSignEvidence(e.b, e.a)), 'the same conflict in the other order has one encoding');
  t.is(pool.addEncoded(encodeEvidence(e)), null, 'known, as gossiped bytes');
  const { pending, committed } = pool.list();
  t.is(committed.length, 0);
  t.is(pending.length, 1);
  t.like(pending[0], { id: evidenceId(e), validator: cheat.address, height: 1, round: 0, type: PREVOTE, included_at: null });
  t.deepEqual(pending[0].block_hashes, ['aa'.repeat(32), 'bb'.repeat(32)]);
});

test('evidence that can never be valid is refused with InvalidEvidenceError and never pooled', async (t) => {
  const { pool } = await poolAt(t, 1);
  const x = vote(cheat, 1, 0, 'aa'.repeat(32));
  const y = vote(cheat, 1, 0, 'bb'.repeat(32));
  const cases: [string, DoubleSignEvidence, RegExp][] = [
    ['same block twice', { a: x, b: { ...x } }, /same block/],
    ['not in canonical order', { a: y, b: x }, /canonical order/],
    ['bad signature', { a: x, b: { ...y, signature: x.signature } }, /signature/],
    ['not a validator', conflict(1, 0, outsider), /not a validator/],
    ['different rounds', { a: x, b: vote(cheat, 1, 1, 'bb'.repeat(32)) }, /one validator, height, round and step/],
  ];
  for (const [name, e, message] of cases) t.throws(() => pool.add(e), { instanceOf: InvalidEvidenceError, message }, name);
  t.throws(() => pool.addEncoded(new Uint8Array([1, 2, 3])), { instanceOf: InvalidEvidenceError }, 'undecodable bytes');
  t.is(pool.list().pending.length, 0);
});

test('evidence beyond the height being decided waits for this node to catch up: not pooled, not an error', async (t) => {
  const { chain, pool } = await poolAt(t, 1);
  t.false(pool.add(conflict(3)), 'height 3 while this node decides 2');
  t.is(pool.list().pending.length, 0);
  // Evidence of the height being decided is pooled, but only a later block may include it.
  const current = conflict(2);
  t.true(pool.add(current));
  t.deepEqual(pool.forProposal(), []);
  await nextFinalized(chain, []);
  t.deepEqual(pool.forProposal(), [encodeEvidence(current)]);
});

test('the proposer gets pending evidence (at most a block’s worth) and the pool drops what a block included', async (t) => {
  const { chain, pool } = await poolAt(t, 1);
  const many = Array.from({ length: MAX_EVIDENCE_PER_BLOCK + 2 }, (_, round) => conflict(1, round));
  for (const e of many) t.true(pool.add(e));
  const proposal = pool.forProposal();
  t.is(proposal.length, MAX_EVIDENCE_PER_BLOCK);
  t.deepEqual(proposal, many.slice(0, MAX_EVIDENCE_PER_BLOCK).map(encodeEvidence), 'oldest first');

  const block = await nextFinalized(chain, [], proposal);
  const { pending, committed } = pool.list();
  t.deepEqual(
    pending.map((p) => p.id),
    many.slice(MAX_EVIDENCE_PER_BLOCK).map(evidenceId),
    'only what the block left out stays',
  );
  t.is(committed.length, MAX_EVIDENCE_PER_BLOCK);
  t.true(committed.every((c) => c.included_at === block.index));
  t.false(pool.add(many[0]), 'included evidence is nothing new');

  // A pool made after a restart knows what the recent blocks included.
  const restarted = new EvidencePool(chain);
  t.is(restarted.list().committed.length, MAX_EVIDENCE_PER_BLOCK);
  t.is(restarted.list().pending.length, 0);
});

test('the pool is bounded: past its limit the oldest pending evidence leaves', async (t) => {
  const { pool } = await poolAt(t, 1, { maxPending: 2 });
  const [first, second, third] = [0, 1, 2].map((round) => conflict(1, round));
  for (const e of [first, second, third]) t.true(pool.add(e));
  t.deepEqual(
    pool.list().pending.map((p) => p.id),
    [second, third].map(evidenceId),
  );
  t.true(pool.add(first), 'the evicted item may come back (it is still valid)');
  t.is(pool.list().pending.length, 2);
});

test('expired evidence leaves the pool as the chain moves on and is refused afterwards', async (t) => {
  const { chain, pool } = await poolAt(t, 1, { maxAgeBlocks: 2 });
  const e = conflict(1);
  t.true(pool.add(e));
  await nextFinalized(chain, []); // height 2: a block at 3 may still include it (age 2)
  t.is(pool.list().pending.length, 1);
  t.deepEqual(pool.forProposal(), [encodeEvidence(e)]);
  await nextFinalized(chain, []); // height 3: the next block (4) is 3 blocks after it
  t.is(pool.list().pending.length, 0, 'dropped on the block, proposer or not');
  t.deepEqual(pool.forProposal(), []);
  t.throws(() => pool.add(e), { instanceOf: InvalidEvidenceError, message: /older than 2 blocks/ });
});

test('once included evidence tombstones its validator, more evidence against it is moot: dropped, not proposed', async (t) => {
  // Five staked validators: slashing tombstones the cheat and four stay (the BFT floor holds).
  const five = [4, 5, 6, 7, 8].map((i) => keyPairFromMnemonic(MNEMONIC, i));
  const base = fixtureParams(five);
  const staked = { ...base, validators: base.validators.map((v) => ({ ...v, stake: MIN_SELF_STAKE_BASE })) };
  const chain = await openChain(t, staked);
  const liar = five[4];
  const honest = five.slice(0, 4); // 4 of 5 equal powers precommit every block: a quorum with and without the liar
  const pool = new EvidencePool(chain);
  await nextFinalized(chain, [], [], five, honest);
  const sign = (round: number, hash: string): Vote => {
    const body = { type: PREVOTE, height: 1, round, block_hash: hash } as const;
    return { ...body, validator: liar.address, signature: toHex(signDigest(voteDigest(staked.chainId, body), liar.privateKey)) };
  };
  const [first, second] = [0, 1].map((round) => doubleSignEvidence(sign(round, 'aa'.repeat(32)), sign(round, 'bb'.repeat(32))));
  t.true(pool.add(first));
  t.true(pool.add(second));
  // A block includes the first only (a proposer that had not seen the second).
  await nextFinalized(chain, [], [encodeEvidence(first)], five, honest);
  t.is(getValidator(chain.state, liar.address)?.status, 'tombstoned');
  t.deepEqual(pool.list().pending, [], 'the second could change nothing: it left the pool on the block');
  t.deepEqual(pool.forProposal(), []);
  const third = doubleSignEvidence(sign(2, 'aa'.repeat(32)), sign(2, 'bb'.repeat(32)));
  t.false(pool.add(third), 'moot on arrival: not pooled, not an error');
  t.is(pool.list().committed.length, 1);
});
