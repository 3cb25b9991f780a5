import test from 'ava';
import { evidenceId, PRECOMMIT, PREVOTE, type Vote, voteDigest, type ActiveValidator } from '../../ts/chain/index.js';
import { InvalidConsensusMessage } from '../../ts/consensus/messages.js';
import { HeightVotes } from '../../ts/consensus/vote-set.js';
import { type KeyPair, keyPairFromMnemonic, signDigest } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const keys = [4, 5, 6, 7].map((i) => keyPairFromMnemonic(MNEMONIC, i));
const CHAIN = 7120;

function vote(key: KeyPair, type: Vote['type'], round: number, hash: string): Vote {
  const body = { type, height: 9, round, block_hash: hash };
  return { ...body, validator: key.address, signature: toHex(signDigest(voteDigest(CHAIN, body), key.privateKey)) };
}

const set = (powers: bigint[]): ActiveValidator[] =>
  keys.map((k, i) => ({ address: k.address, public_key: toHex(k.publicKey), name: `v${i}`, power: powers[i] }));

test('votes count by voting power: 3/4 for a quorum, more than 1/4 to pull a node into a later round', (t) => {
  const votes = new HeightVotes(CHAIN, set([1n, 1n, 1n, 5n]));
  const h = 'aa'.repeat(32);
  for (const k of keys.slice(0, 3)) t.is(votes.add(vote(k, PREVOTE, 0, h)), 'added');
  t.is(votes.power(0, PREVOTE, h), 3n);
  t.false(votes.quorum(0, PREVOTE, h), '3 of 8 is no quorum');
  t.is(votes.add(vote(keys[3], PREVOTE, 0, '')), 'added');
  t.true(votes.quorum(0, PREVOTE), '8 of 8 voted (any block)');
  t.false(votes.quorum(0, PREVOTE, ''), 'nil has 5 of 8');
  t.false(votes.roundHasMoreThanFaulty(1));
  votes.add(vote(keys[0], PRECOMMIT, 1, h));
  votes.add(vote(keys[1], PRECOMMIT, 1, h));
  t.false(votes.roundHasMoreThanFaulty(1), '2 of 8 is not more than 1/4');
  votes.add(vote(keys[2], PREVOTE, 1, h));
  t.true(votes.roundHasMoreThanFaulty(1), '3 of 8 is');
  votes.add(vote(keys[3], PRECOMMIT, 1, h));
  t.true(votes.quorum(1, PRECOMMIT, h), '7 of 8');
  t.deepEqual(votes.precommitRounds(), [1]);
  t.deepEqual(
    votes.precommitsFor(1, h).map((p) => p.validator),
    [keys[0], keys[1], keys[3]].map((k) => k.address).sort(),
  );
});

test('a second, different vote at a position is evidence and is not counted; forged votes are refused', (t) => {
  const votes = new HeightVotes(CHAIN, set([1n, 1n, 1n, 1n]));
  const a = vote(keys[0], PREVOTE, 0, 'aa'.repeat(32));
  const b = vote(keys[0], PREVOTE, 0, 'bb'.repeat(32));
  t.is(votes.add(a), 'added');
  t.is(votes.add({ ...a }), 'known');
  const e = votes.add(b);
  t.true(typeof e === 'object');
  if (typeof e === 'object') {
    t.is(e.a.block_hash, 'aa'.repeat(32));
    t.is(e.b.block_hash, 'bb'.repeat(32));
    t.regex(evidenceId(e), /^[0-9a-f]{64}$/);
  }
  t.is(votes.power(0, PREVOTE, 'bb'.repeat(32)), 0n);
  t.throws(() => votes.add({ ...b, signature: a.signature }), { instanceOf: InvalidConsensusMessage });
  const outsider = keyPairFromMnemonic(MNEMONIC, 11);
  t.throws(() => votes.add(vote(outsider, PREVOTE, 0, 'aa'.repeat(32))), { instanceOf: InvalidConsensusMessage });
});
