import test from 'ava';
import { STEP_PRECOMMIT, STEP_PREVOTE, STEP_PROPOSE, SignGuard } from '../../ts/consensus/privval.js';
import { tempDir } from '../helpers/util.js';

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);

test('a validator never signs two things for one position, and forgets nothing across a restart', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const g = new SignGuard(tmp.dir);
  t.true(g.allow(10, 0, STEP_PROPOSE, A));
  t.true(g.allow(10, 0, STEP_PREVOTE, A));
  // Same position, same block: the identical vote may be sent again; another block may not.
  t.true(g.allow(10, 0, STEP_PREVOTE, A));
  t.false(g.allow(10, 0, STEP_PREVOTE, B));
  t.false(g.allow(10, 0, STEP_PREVOTE, ''));
  // Killed between its prevote and its precommit: the restarted process reads the same state.
  const restarted = new SignGuard(tmp.dir);
  t.deepEqual(restarted.last, {
    height: 10,
    round: 0,
    step: STEP_PREVOTE,
    block_hash: A,
    votes: [{ round: 0, step: STEP_PREVOTE, block_hash: A }],
  });
  t.false(restarted.allow(10, 0, STEP_PREVOTE, B), 'no second prevote after the restart');
  t.false(restarted.allow(10, 0, STEP_PROPOSE, B), 'no going back to an earlier step');
  t.true(restarted.allow(10, 0, STEP_PRECOMMIT, A));
  t.deepEqual(restarted.last.lock, { round: 0, block_hash: A }, 'a precommit for a block is a lock');
  // Later rounds and heights move on; the lock is kept within its height and dropped after it.
  t.true(restarted.allow(10, 1, STEP_PREVOTE, ''));
  t.deepEqual(new SignGuard(tmp.dir).last.lock, { round: 0, block_hash: A });
  t.false(restarted.allow(9, 5, STEP_PRECOMMIT, A), 'an earlier height is never signed again');
  // Every vote of the height is remembered (a restarted validator sends them all again), and only those.
  t.deepEqual(new SignGuard(tmp.dir).last.votes, [
    { round: 0, step: STEP_PREVOTE, block_hash: A },
    { round: 0, step: STEP_PRECOMMIT, block_hash: A },
    { round: 1, step: STEP_PREVOTE, block_hash: '' },
  ]);
  t.true(restarted.allow(11, 0, STEP_PREVOTE, B));
  t.is(new SignGuard(tmp.dir).last.lock, undefined);
  t.deepEqual(new SignGuard(tmp.dir).last.votes, [{ round: 0, step: STEP_PREVOTE, block_hash: B }]);
});
