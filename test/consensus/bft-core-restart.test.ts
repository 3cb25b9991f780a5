/**
 * The restart-with-lock cases of test/consensus/bft-restart.test.ts, step by step on the BFT core with the
 * real sign guard (its state file and kept blocks in a temp dir): a validator signs, "crashes" (its core is
 * dropped), and a new core resumes from what the guard persisted, as BftEngine does on start.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { PRECOMMIT, PREVOTE } from '../../ts/chain/index.js';
import { resumeFromSignState } from '../../ts/consensus/bft.js';
import { blockOf } from '../../ts/consensus/bft-core.js';
import { STEP_PRECOMMIT, STEP_PREVOTE, SignGuard } from '../../ts/consensus/privval.js';
import { CoreHarness, HEIGHT, KEYS, ofKind, proposalOf, testBlock, voteRequests } from './bft-core-harness.js';
import { tempDir } from '../helpers/util.js';

const A = testBlock(1);
const B = testBlock(2, HEIGHT, 1);

/** A validator (KEYS[0]) that prevoted and precommitted A in round 0 through the guard in `dir`. */
function lockedOnA(dir: string): { signed: string[] } {
  const guard = new SignGuard(dir);
  const core = new CoreHarness(KEYS[0]);
  core.start();
  const prevote = core.sign(core.proposal(proposalOf(A, 0)), guard);
  const precommit = core.sign(core.votes([1, 2], PREVOTE, 0, A.hash), guard);
  return { signed: [...prevote.signed, ...precommit.signed].map((v) => v.signature) };
}

/** A new core started from the sign state in `dir`, as a restarted process starts. */
function restart(dir: string): { core: CoreHarness; guard: SignGuard; effects: ReturnType<CoreHarness['start']> } {
  const guard = new SignGuard(dir);
  const core = new CoreHarness(KEYS[0]);
  const effects = core.start({ resume: resumeFromSignState(guard, HEIGHT) });
  return { core, guard, effects };
}

test('restarted after its precommit: it keeps its lock, sends the identical votes again and decides the kept block', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const before = lockedOnA(tmp.dir);
  t.is(before.signed.length, 2);

  const { core, guard, effects } = restart(tmp.dir);
  t.deepEqual(
    effects.map((e) => e.kind),
    ['cancel_timeouts', 'check_block', 'resumed', 'round_started', 'schedule_timeout', 'resend_vote', 'sign_vote'],
  );
  t.is(ofKind(effects, 'check_block')[0].block.hash, A.hash, 'the locked block, read back from disk, is checked again');
  t.deepEqual(ofKind(effects, 'resumed')[0].info, {
    height: HEIGHT,
    round: 0,
    locked_round: 0,
    locked_hash: A.hash,
    locked_block: true,
    valid_round: 0,
  });
  t.like(core.state, { round: 0, step: 'precommit', lockedRound: 0, lockedHash: A.hash, validRound: 0 });
  t.is(core.state.proposals.size, 0, 'the proposal itself is gone');
  t.is(blockOf(core.state, A.hash)?.hash, A.hash, 'but the block is served to peers by hash');

  const again = core.sign(effects, guard);
  t.deepEqual(
    again.signed.map((v) => v.signature),
    before.signed,
    'the very prevote and precommit signed before the crash (no second vote at a position)',
  );
  // The block checks out; the other restarted validators' precommits come again: A is decided.
  t.deepEqual(core.feed({ kind: 'block_checked', height: HEIGHT, hash: A.hash, valid: true }), []);
  const [commit] = ofKind(core.votes([1, 2], PRECOMMIT, 0, A.hash), 'commit');
  t.is(commit.block.hash, A.hash);
  t.is(commit.round, 0);
  t.is(commit.precommits.length, 3);
});

test('restarted locked on a block nobody else kept: nil for other blocks, and it proposes the locked block on its turn', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  lockedOnA(tmp.dir);
  const { core, guard, effects } = restart(tmp.dir);
  core.sign(effects, guard);
  core.feed({ kind: 'block_checked', height: HEIGHT, hash: A.hash, valid: true });
  // Nobody else precommitted A: round 0 ends with nil precommits.
  core.votes([1, 2, 3], PRECOMMIT, 0, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' });
  // Round 1: a fresh block B. Locked on A: nil.
  const fresh = core.proposal(proposalOf(B, 1));
  t.deepEqual(voteRequests(fresh), [[PREVOTE, 1, '']]);
  t.deepEqual(
    core.sign(fresh, guard).signed.map((v) => v.block_hash),
    [''],
  );
  // Rounds 1 and 2 end without a decision; round 3 is this validator's.
  core.sign(core.votes([1, 2], PREVOTE, 1, ''), guard);
  core.votes([1, 2, 3], PRECOMMIT, 1, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'precommit' });
  core.sign(core.feed({ kind: 'timeout', height: HEIGHT, round: 2, step: 'propose' }), guard);
  core.sign(core.votes([1, 2], PREVOTE, 2, ''), guard);
  core.votes([1, 2, 3], PRECOMMIT, 2, '');
  const round3 = core.feed({ kind: 'timeout', height: HEIGHT, round: 2, step: 'precommit' });
  const [propose] = ofKind(round3, 'propose');
  t.is(propose.block?.hash, A.hash, 'the valid block, not a new one');
  const [proposal] = ofKind(core.feed({ kind: 'proposal_due', height: HEIGHT, round: 3, block: A }), 'sign_proposal');
  t.like(proposal, { round: 3, polRound: 0 });
});

test('restarted between its prevote and its precommit: it rejoins in prevote and locks when the polka arrives', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  {
    const guard = new SignGuard(tmp.dir);
    const core = new CoreHarness(KEYS[0]);
    core.start();
    core.sign(core.proposal(proposalOf(A, 0)), guard);
    t.like(guard.last, { height: HEIGHT, round: 0, step: STEP_PREVOTE, block_hash: A.hash });
  }
  const { core, guard, effects } = restart(tmp.dir);
  t.deepEqual(voteRequests(effects), [[PREVOTE, 0, A.hash]]);
  t.deepEqual(ofKind(effects, 'resend_vote'), [], 'only the last vote, through the guard');
  t.like(core.state, { step: 'prevote', lockedRound: -1, validRound: -1 });
  core.sign(effects, guard);
  // The proposal comes back (catch-up from a peer) with the polka: lock and precommit, the block kept on disk.
  core.proposal(proposalOf(A, 0));
  const lock = core.sign(core.votes([1, 2], PREVOTE, 0, A.hash), guard);
  t.deepEqual(
    lock.signed.map((v) => [v.type, v.block_hash]),
    [[PRECOMMIT, A.hash]],
  );
  t.like(guard.last, { step: STEP_PRECOMMIT, lock: { round: 0, block_hash: A.hash } });
  t.is(guard.keptBlock(A.hash)?.hash, A.hash);
});

test('restarted with a lock whose block was not kept: nil for other blocks until the locked one is proposed again', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  lockedOnA(tmp.dir);
  // An older state file: the lock without its block.
  const blocks = join(tmp.dir, 'priv_validator_blocks');
  for (const f of readdirSync(blocks)) rmSync(join(blocks, f));
  const { core, guard, effects } = restart(tmp.dir);
  t.like(ofKind(effects, 'resumed')[0].info, { locked_round: 0, locked_hash: A.hash, locked_block: false, valid_round: -1 });
  t.deepEqual(ofKind(effects, 'check_block'), []);
  t.is(core.state.lockedBlock, null);
  core.sign(effects, guard);
  core.votes([1, 2, 3], PRECOMMIT, 0, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 0, step: 'precommit' });
  t.deepEqual(voteRequests(core.proposal(proposalOf(B, 1))), [[PREVOTE, 1, '']], 'B: nil');
  core.sign(core.votes([1, 2], PREVOTE, 1, ''), guard);
  core.votes([1, 2, 3], PRECOMMIT, 1, '');
  core.feed({ kind: 'timeout', height: HEIGHT, round: 1, step: 'precommit' });
  t.deepEqual(voteRequests(core.proposal(proposalOf(A, 2))), [[PREVOTE, 2, A.hash]], 'A again: prevoted');
});
