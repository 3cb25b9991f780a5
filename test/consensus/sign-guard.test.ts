import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { encodeBlock } from '../../ts/chain/index.js';
import { STEP_PRECOMMIT, STEP_PREVOTE, STEP_PROPOSE, SignGuard } from '../../ts/consensus/privval.js';
import { NOW, openFixtureChain, validBlock } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

/** Two different real blocks of one height (the guard keeps the blocks of its lock and valid block). */
async function twoBlocks(dir: string) {
  const { chain, db } = await openFixtureChain(dir);
  try {
    return [await validBlock(chain, [], NOW), await validBlock(chain, [], NOW + 1)];
  } finally {
    await db.close();
  }
}

test('a validator never signs two things for one position, and forgets nothing across a restart', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const [blockA, blockB] = await twoBlocks(join(tmp.dir, 'chain'));
  const [A, B] = [blockA.hash, blockB.hash];
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
  t.throws(() => restarted.allow(10, 0, STEP_PRECOMMIT, A), { message: /without its block/ });
  t.true(restarted.allow(10, 0, STEP_PRECOMMIT, A, blockA));
  t.deepEqual(restarted.last.lock, { round: 0, block_hash: A }, 'a precommit for a block is a lock');
  t.deepEqual(restarted.last.valid, { round: 0, block_hash: A }, 'and its block the valid block');
  // Later rounds and heights move on; the lock is kept within its height and dropped after it.
  t.true(restarted.allow(10, 1, STEP_PREVOTE, ''));
  t.deepEqual(new SignGuard(tmp.dir).last.lock, { round: 0, block_hash: A });
  t.false(restarted.allow(9, 5, STEP_PRECOMMIT, A, blockA), 'an earlier height is never signed again');
  // Every vote of the height is remembered (a restarted validator sends them all again), and only those.
  t.deepEqual(new SignGuard(tmp.dir).last.votes, [
    { round: 0, step: STEP_PREVOTE, block_hash: A },
    { round: 0, step: STEP_PRECOMMIT, block_hash: A },
    { round: 1, step: STEP_PREVOTE, block_hash: '' },
  ]);
  t.true(restarted.allow(11, 0, STEP_PREVOTE, B));
  t.is(new SignGuard(tmp.dir).last.lock, undefined);
  t.is(new SignGuard(tmp.dir).last.valid, undefined);
  t.deepEqual(new SignGuard(tmp.dir).last.votes, [{ round: 0, step: STEP_PREVOTE, block_hash: B }]);
});

test('the locked and the valid block are kept on disk with the sign state, and dropped after their height', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const [blockA, blockB] = await twoBlocks(join(tmp.dir, 'chain'));
  const kept = () =>
    existsSync(join(tmp.dir, 'priv_validator_blocks')) ? readdirSync(join(tmp.dir, 'priv_validator_blocks')).sort() : [];
  const g = new SignGuard(tmp.dir);
  t.true(g.allow(7, 0, STEP_PREVOTE, blockA.hash));
  t.deepEqual(kept(), [], 'a prevote keeps no block');
  t.true(g.allow(7, 0, STEP_PRECOMMIT, blockA.hash, blockA));
  t.deepEqual(kept(), [`${blockA.hash}.block`]);
  // Killed: the restarted process reads the locked block back, byte for byte.
  const restarted = new SignGuard(tmp.dir);
  const back = restarted.keptBlock(blockA.hash);
  t.truthy(back);
  t.deepEqual(encodeBlock(back as NonNullable<typeof back>), encodeBlock(blockA));
  t.is(restarted.keptBlock(blockB.hash), null, 'a block it never kept');
  t.is(restarted.keptBlock('../x'), null);
  // A later round's quorum for another block: the valid block moves on, the lock stays (a lock changes only
  // with a precommit); both blocks are kept.
  t.true(restarted.allow(7, 1, STEP_PREVOTE, ''));
  restarted.keepValid(7, 1, blockB);
  restarted.keepValid(7, 0, blockA);
  const again = new SignGuard(tmp.dir);
  t.deepEqual(again.last.lock, { round: 0, block_hash: blockA.hash });
  t.deepEqual(again.last.valid, { round: 1, block_hash: blockB.hash }, 'an older round does not replace the valid block');
  t.deepEqual(kept(), [`${blockA.hash}.block`, `${blockB.hash}.block`].sort());
  t.is(again.keptBlock(blockB.hash)?.hash, blockB.hash);
  // A corrupted file is not taken for the block.
  writeFileSync(join(tmp.dir, 'priv_validator_blocks', `${blockB.hash}.block`), encodeBlock(blockA));
  t.is(new SignGuard(tmp.dir).keptBlock(blockB.hash), null);
  // The next height: nothing of this one is kept.
  t.true(again.allow(8, 0, STEP_PREVOTE, ''));
  t.deepEqual(kept(), []);
  // A valid block of a height at which nothing was signed yet starts that height's record.
  again.keepValid(9, 2, blockA);
  const fresh = new SignGuard(tmp.dir);
  t.deepEqual(
    { height: fresh.last.height, step: fresh.last.step, valid: fresh.last.valid },
    {
      height: 9,
      step: 0,
      valid: { round: 2, block_hash: blockA.hash },
    },
  );
  t.true(fresh.allow(9, 0, STEP_PROPOSE, blockA.hash), 'nothing of height 9 was signed');
  t.false(fresh.allow(8, 3, STEP_PREVOTE, ''), 'height 8 is over');
});
