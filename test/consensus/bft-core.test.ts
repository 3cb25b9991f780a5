/**
 * The BFT core (ts/consensus/bft-core.ts) step by step: no network, no timers, no chain. This validator is
 * KEYS[0]; at HEIGHT the proposer of round r is KEYS[(HEIGHT + r) % 4], so KEYS[1] proposes round 0,
 * KEYS[2] round 1, KEYS[3] round 2 and this validator round 3. Votes and proposals carry real signatures.
 */
import test from 'ava';
import { PRECOMMIT, PREVOTE } from '../../ts/chain/index.js';
import { MAX_TIMEOUT_GROWTH_ROUNDS, roundTimeout } from '../../ts/consensus/bft-options.js';
import { InvalidConsensusMessage } from '../../ts/consensus/messages.js';
import { DEV_MNEMONIC, keyPairFromMnemonic } from '../../ts/ledger/index.js';
import {
  CoreHarness,
  HEIGHT,
  KEYS,
  TIMEOUTS,
  ofKind,
  proposalOf,
  testBlock,
  validatorSet,
  voteOf,
  voteRequests,
} from './bft-core-harness.js';

const A = testBlock(1);
const B = testBlock(2, HEIGHT, 1);

test('a height starts in round 0 with a propose timeout after the slot; a non-proposer proposes nothing', (t) => {
  const core = new CoreHarness(KEYS[0]);
  const effects = core.start({ slotWaitMs: 400 });
  t.deepEqual(
    effects.map((e) => e.kind),
    ['cancel_timeouts', 'round_started', 'schedule_timeout'],
  );
  t.like(ofKind(effects, 'schedule_timeout')[0], { height: HEIGHT, round: 0, step: 'propose', ms: 400 + TIMEOUTS.proposeMs });
  t.like(core.state, { height: HEIGHT, round: 0, step: 'propose', active: true, lockedRound: -1, validRound: -1 });

  const proposer = new CoreHarness(KEYS[1]);
  t.like(ofKind(proposer.start({ slotWaitMs: 400 }), 'propose')[0], { height: HEIGHT, round: 0, block: null, sendInMs: 400 });
});

test('a node outside the validator set, or a height that does not run BFT, takes no part', (t) => {
  const outsider = new CoreHarness(keyPairFromMnemonic(DEV_MNEMONIC, 40));
  t.deepEqual(
    outsider.start().map((e) => e.kind),
    ['cancel_timeouts'],
  );
  t.false(outsider.state.active);
  t.deepEqual(outsider.vote(voteOf(KEYS[1], PREVOTE, 0, A.hash)), [], 'its messages are ignored');
});

test('nil prevote on the propose timeout; a timeout of another round or step changes nothing', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  t.deepEqual(core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'propose' }), [], 'a later round');
  t.deepEqual(core.feed({ kind: 'timeout', height: HEIGHT - 1, round: 0, step: 'propose' }), [], 'an earlier height');
  t.deepEqual(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'prevote' }), [], 'not in prevote yet');
  const effects = core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' });
  t.deepEqual(voteRequests(effects), [[PREVOTE, 0, '']]);
  t.is(core.state.step, 'prevote');
  t.deepEqual(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' }), [], 'fires once');
});

test('a valid proposal is prevoted once its block checks out; an invalid one gets a nil prevote', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  const received = core.feed({ kind: 'proposal', proposal: proposalOf(A, 0) });
  t.deepEqual(
    received.map((e) => e.kind),
    ['check_block'],
    'no vote before the block-validity rule answers',
  );
  t.deepEqual(voteRequests(core.feed({ kind: 'block_checked', height: HEIGHT, hash: A.hash, valid: true })), [
    [PREVOTE, 0, A.hash],
  ]);
  t.deepEqual(core.feed({ kind: 'proposal', proposal: proposalOf(A, 0) }), [], 'the same proposal again: nothing new');

  const other = new CoreHarness(KEYS[0]);
  other.start();
  t.deepEqual(voteRequests(other.proposal(proposalOf(A, 0), false)), [[PREVOTE, 0, '']]);
});

test('a forged proposal or vote throws before the state changes', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  const byWrongProposer = { ...proposalOf(A, 1), round: 0 };
  t.throws(() => core.feed({ kind: 'proposal', proposal: byWrongProposer }), { instanceOf: InvalidConsensusMessage });
  t.is(core.state.proposals.size, 0);
  const forged = { ...voteOf(KEYS[1], PREVOTE, 0, A.hash), block_hash: B.hash };
  t.throws(() => core.vote(forged), { instanceOf: InvalidConsensusMessage });
  t.is(core.state.votes.all().length, 0);
});

test('lock on a polka: a prevote quorum for the proposal locks, precommits it and keeps it as the valid block', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  const prevoted = core.sign(core.proposal(proposalOf(A, 0)));
  t.deepEqual(
    prevoted.signed.map((v) => [v.type, v.block_hash]),
    [[PREVOTE, A.hash]],
  );
  t.deepEqual(voteRequests(core.votes([1], PREVOTE, 0, A.hash)), [], '2 of 4 is no quorum');
  const effects = core.votes([2], PREVOTE, 0, A.hash);
  t.like(ofKind(effects, 'schedule_timeout')[0], { round: 0, step: 'prevote', ms: TIMEOUTS.voteMs });
  const [precommit] = ofKind(effects, 'sign_vote');
  t.like(precommit, { type: PRECOMMIT, round: 0, blockHash: A.hash });
  t.is(precommit.block, A, 'the block travels with the lock to the sign guard');
  t.like(ofKind(effects, 'keep_valid')[0], { height: HEIGHT, round: 0 });
  t.like(core.state, { step: 'precommit', lockedRound: 0, lockedHash: A.hash, validRound: 0 });
  t.is(core.state.lockedBlock, A);
  t.deepEqual(voteRequests(core.votes([3], PREVOTE, 0, A.hash)), [], 'a fourth prevote changes nothing');
});

test('nil precommit on the prevote timeout, after a prevote quorum for no single block', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.sign(core.proposal(proposalOf(A, 0)));
  core.votes([1], PREVOTE, 0, A.hash);
  const effects = core.votes([2], PREVOTE, 0, '');
  t.deepEqual(voteRequests(effects), [], 'split: no precommit yet');
  t.like(ofKind(effects, 'schedule_timeout')[0], { height: HEIGHT, round: 0, step: 'prevote', ms: TIMEOUTS.voteMs });
  t.deepEqual(voteRequests(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'prevote' })), [[PRECOMMIT, 0, '']]);
  t.like(core.state, { step: 'precommit', lockedRound: -1, lockedHash: null });
});

test('a prevote quorum for nil precommits nil at once', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' }));
  t.deepEqual(voteRequests(core.votes([1, 2], PREVOTE, 0, '')), [[PRECOMMIT, 0, '']]);
});

test('the precommit timeout starts the next round; a precommit quorum for no block schedules it', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' }));
  core.sign(core.votes([1, 2], PREVOTE, 0, ''));
  const effects = core.votes([1, 2], PRECOMMIT, 0, '');
  t.like(ofKind(effects, 'schedule_timeout')[0], { round: 0, step: 'precommit', ms: TIMEOUTS.voteMs });
  t.deepEqual(ofKind(effects, 'commit'), [], 'nil decides nothing');
  const next = core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' });
  t.deepEqual(
    next.map((e) => e.kind),
    ['cancel_timeouts', 'round_started', 'schedule_timeout'],
  );
  t.like(ofKind(next, 'schedule_timeout')[0], { round: 1, step: 'propose', ms: TIMEOUTS.proposeMs + TIMEOUTS.deltaMs });
  t.like(core.state, { round: 1, step: 'propose' });
});

test('lock moves on a polka of a later round: locked on A, a polka for B while in prevote relocks on B', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.sign(core.proposal(proposalOf(A, 0)));
  core.sign(core.votes([1, 2], PREVOTE, 0, A.hash));
  t.like(core.state, { lockedRound: 0, lockedHash: A.hash });
  core.votes([1, 2], PRECOMMIT, 0, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' });
  // Round 1: a fresh block B (pol_round -1): locked on A, this validator prevotes nil.
  const fresh = core.proposal(proposalOf(B, 1));
  t.deepEqual(voteRequests(fresh), [[PREVOTE, 1, '']]);
  core.sign(fresh);
  // The others prevote B: a polka for B in round 1 while this validator is in prevote.
  const relock = core.votes([1, 2, 3], PREVOTE, 1, B.hash);
  t.deepEqual(voteRequests(relock), [[PRECOMMIT, 1, B.hash]]);
  t.like(core.state, { lockedRound: 1, lockedHash: B.hash, validRound: 1 });
  t.is(core.state.lockedBlock, B);
});

test('unlock by pol_round: locked on A in round 0, a proposal of B with a round-1 polka is prevoted in round 2', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.sign(core.proposal(proposalOf(A, 0)));
  core.sign(core.votes([1, 2], PREVOTE, 0, A.hash));
  core.votes([1, 2], PRECOMMIT, 0, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' });
  // Round 1: no proposal here; this validator prevotes nil, then precommits nil on the prevote timeout.
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'propose' }));
  core.votes([1, 2], PREVOTE, 1, B.hash);
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'prevote' }));
  core.votes([3], PREVOTE, 1, B.hash);
  t.like(core.state, { lockedRound: 0, lockedHash: A.hash }, 'a polka without its proposal here moves nothing');
  core.votes([1, 2, 3], PRECOMMIT, 1, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'precommit' });
  // Round 2: B with pol_round 1 ≥ the locked round 0, and the round-1 polka is here: prevote B.
  const prevote = core.proposal(proposalOf(B, 2, 1));
  t.deepEqual(voteRequests(prevote), [[PREVOTE, 2, B.hash]]);
  core.sign(prevote);
  t.deepEqual(voteRequests(core.votes([1, 2], PREVOTE, 2, B.hash)), [[PRECOMMIT, 2, B.hash]]);
  t.like(core.state, { lockedRound: 2, lockedHash: B.hash, validRound: 2 });
});

test('a proposal whose pol_round polka is not here waits for it; a polka below the lock gets nil', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.sign(core.proposal(proposalOf(A, 0)));
  core.votes([1], PREVOTE, 0, B.hash);
  core.sign(core.votes([2, 3], PREVOTE, 0, A.hash));
  t.like(core.state, { lockedRound: 0, lockedHash: A.hash });
  core.votes([1, 2, 3], PRECOMMIT, 0, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' });
  t.deepEqual(voteRequests(core.proposal(proposalOf(B, 1, 0))), [], 'B has 1 of 4 prevotes in round 0: no vote yet');
  t.is(core.state.step, 'propose');
  t.deepEqual(voteRequests(core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'propose' })), [[PREVOTE, 1, '']]);
});

test('valid round: a polka seen after precommitting sets the valid block, which this validator proposes later', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  // Round 0: the proposal of A is late here: this validator prevotes nil, then precommits nil.
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' }));
  const split = core.votes([1, 2], PREVOTE, 0, A.hash);
  t.like(ofKind(split, 'schedule_timeout')[0], { step: 'prevote' });
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'prevote' }));
  t.is(core.state.step, 'precommit');
  // The proposal and the third prevote for A arrive: A becomes the valid block of round 0, without a lock.
  core.proposal(proposalOf(A, 0));
  const late = core.votes([3], PREVOTE, 0, A.hash);
  t.deepEqual(voteRequests(late), [], 'no precommit: already precommitted in this round');
  t.like(ofKind(late, 'keep_valid')[0], { height: HEIGHT, round: 0, block: A });
  t.like(core.state, { lockedRound: -1, validRound: 0 });
  // Rounds 0, 1 and 2 end without a decision; round 3 is this validator's: it proposes A with pol_round 0.
  for (const r of [0, 1, 2]) {
    if (r > 0) {
      core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: r, step: 'propose' }));
      core.sign(core.votes([1, 2], PREVOTE, r, ''));
    }
    core.votes([1, 2, 3], PRECOMMIT, r, '');
    const next = core.feed({ kind: 'timeout', height: HEIGHT, round: r, step: 'precommit' });
    t.is(ofKind(next, 'propose').length, r === 2 ? 1 : 0);
    if (r === 2) t.like(ofKind(next, 'propose')[0], { round: 3, block: A, sendInMs: 0 });
  }
  const [signed] = ofKind(core.feed({ kind: 'proposal_due', height: HEIGHT, round: 3, block: A }), 'sign_proposal');
  t.like(signed, { height: HEIGHT, round: 3, polRound: 0, block: A });
});

test('round skip on more than 1/4 of the voting power in a later round (stake-weighted)', (t) => {
  // Powers 1, 1, 1, 5 (total 8): more than 1/4 is 3 or more.
  const weighted = new CoreHarness(KEYS[0], validatorSet([1n, 1n, 1n, 5n]));
  weighted.start();
  t.deepEqual(weighted.votes([1], PREVOTE, 3, ''), [], '1 of 8');
  t.deepEqual(weighted.votes([2], PRECOMMIT, 3, ''), [], '2 of 8 is exactly 1/4: not more');
  const skip = weighted.votes([3], PREVOTE, 4, '');
  t.deepEqual(
    skip.map((e) => e.kind),
    ['cancel_timeouts', 'round_started', 'schedule_timeout'],
    '5 of 8 in round 4 alone',
  );
  t.like(weighted.state, { round: 4, step: 'propose' });
  t.like(ofKind(skip, 'schedule_timeout')[0], { round: 4, ms: TIMEOUTS.proposeMs + 4 * TIMEOUTS.deltaMs });
  t.deepEqual(weighted.votes([1], PRECOMMIT, 3, ''), [], 'an earlier round pulls nowhere');

  // Equal power: 1 of 4 is not more than 1/4, 2 of 4 is; votes of either step count.
  const core = new CoreHarness(KEYS[0]);
  core.start();
  t.deepEqual(core.votes([1], PREVOTE, 2, ''), []);
  const equal = core.votes([2], PRECOMMIT, 2, '');
  t.like(ofKind(equal, 'round_started')[0], { round: 2 });
  t.is(core.state.round, 2);
});

test('commit on a 3/4 precommit quorum, only for a block checked valid, with the precommits as justification', (t) => {
  const core = new CoreHarness(KEYS[0], validatorSet([2n, 1n, 1n, 2n]));
  core.start();
  core.feed({ kind: 'proposal', proposal: proposalOf(A, 0) });
  // Precommits of 1 + 1 + 2 = 4 of 6: not 3/4.
  t.deepEqual(ofKind(core.votes([1, 2, 3], PRECOMMIT, 0, A.hash), 'commit'), []);
  const ownPrecommit = voteOf(KEYS[0], PRECOMMIT, 0, A.hash);
  t.deepEqual(ofKind(core.vote(ownPrecommit), 'commit'), [], '6 of 6, but the block is not checked yet');
  const decided = core.feed({ kind: 'block_checked', height: HEIGHT, hash: A.hash, valid: true });
  const [commit] = ofKind(decided, 'commit');
  t.is(commit.block, A);
  t.is(commit.round, 0);
  t.deepEqual(
    commit.precommits.map((p) => p.validator),
    [0, 1, 2, 3].map((i) => KEYS[i].address),
    'in address order',
  );
  t.is(decided.length, 1, 'deciding ends the step: no other rule runs');
});

test('a commit decides a precommit quorum of an earlier round too', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.proposal(proposalOf(A, 0));
  core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' });
  core.votes([1, 2], PREVOTE, 2, '');
  t.is(core.state.round, 2);
  const [commit] = ofKind(core.votes([1, 2, 3], PRECOMMIT, 0, A.hash), 'commit');
  t.like(commit, { round: 0, block: A });
});

test('late precommits for the previous height are ignored once the next height started', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.proposal(proposalOf(A, 0));
  t.is(ofKind(core.votes([1, 2, 3], PRECOMMIT, 0, A.hash), 'commit').length, 1);
  // The driver commits A; the head moves and the next height starts.
  const next = HEIGHT + 1;
  core.feed({ kind: 'start_height', height: next, validators: core.validators, active: true, slotWaitMs: 0 });
  t.like(core.state, { height: next, round: 0, lockedRound: -1, validRound: -1 });
  t.is(core.state.proposals.size, 0);
  // This validator's own late precommit of the decided height, and a late one for another block.
  t.deepEqual(core.vote(voteOf(KEYS[0], PRECOMMIT, 0, A.hash, HEIGHT)), []);
  t.deepEqual(core.vote(voteOf(KEYS[3], PRECOMMIT, 1, B.hash, HEIGHT)), []);
  t.is(core.state.votes.all().length, 0, 'nothing counted at the new height');
  t.deepEqual(core.feed({ kind: 'block_checked', height: HEIGHT, hash: A.hash, valid: true }), [], 'a late check result');
  t.deepEqual(core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' }), [], 'a late timeout');
});

test('double votes are reported as evidence and not counted', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  core.votes([1], PREVOTE, 0, A.hash);
  const [evidence] = ofKind(core.votes([1], PREVOTE, 0, B.hash), 'evidence');
  t.deepEqual([evidence.evidence.a.block_hash, evidence.evidence.b.block_hash].sort(), [A.hash, B.hash].sort());
  t.is(evidence.evidence.a.validator, KEYS[1].address);
  t.is(core.state.votes.power(0, PREVOTE, B.hash), 0n);
});

test('round timeouts stop growing after the cap', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  const far = MAX_TIMEOUT_GROWTH_ROUNDS + 5;
  const skip = core.votes([1, 2], PREVOTE, far, '');
  t.like(ofKind(skip, 'schedule_timeout')[0], {
    round: far,
    ms: roundTimeout(TIMEOUTS.proposeMs, TIMEOUTS.deltaMs, MAX_TIMEOUT_GROWTH_ROUNDS),
  });
});

test('the same inputs give the same effects (no clock, no randomness inside)', (t) => {
  const run = () => {
    const core = new CoreHarness(KEYS[0]);
    core.start({ slotWaitMs: 250 });
    core.sign(core.proposal(proposalOf(A, 0)));
    core.sign(core.votes([1, 2], PREVOTE, 0, A.hash));
    core.votes([1, 2, 3], PRECOMMIT, 0, A.hash);
    return core.log;
  };
  t.deepEqual(run(), run());
});

test('a proposal by reference: its block is fetched from the sender unless at hand; a forged one throws', (t) => {
  const core = new CoreHarness(KEYS[0]);
  core.start();
  const { block: _, ...signed } = proposalOf(A, 0);
  const ref = { ...signed, block_hash: A.hash };
  t.throws(() => core.feed({ kind: 'proposal_ref', ref: { ...ref, round: 1 }, from: 'peer' }), {
    instanceOf: InvalidConsensusMessage,
  });
  const fetch = core.feed({ kind: 'proposal_ref', ref, from: 'peer' });
  t.deepEqual(fetch, [{ kind: 'fetch_block', ref, from: 'peer' }]);
  t.is(core.state.proposals.size, 0, 'nothing taken before the block is here');
  // The driver fetched it: the proposal comes in with its block.
  t.deepEqual(voteRequests(core.proposal({ ...signed, block: A })), [[PREVOTE, 0, A.hash]]);

  // At hand (here the block of round 0's proposal, proposed again in round 1): taken at once, no fetch.
  const other = new CoreHarness(KEYS[0]);
  other.start();
  other.proposal(proposalOf(A, 0));
  const { block: __, ...signed1 } = proposalOf(A, 1, 0);
  other.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'propose' });
  other.votes([1, 2], PREVOTE, 1, '');
  const taken = other.feed({ kind: 'proposal_ref', ref: { ...signed1, block_hash: A.hash }, from: 'peer' });
  t.deepEqual(ofKind(taken, 'fetch_block'), []);
  t.is(other.state.proposals.get(1)?.block, A);
});
