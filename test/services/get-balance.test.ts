/**
 * getBalance, the one balance read of every transport: wei at a block named by tag, number or hash, and the one
 * rule for a height above the head (NoSuchHeightError naming the head), on a real chain in a temp dir.
 */
import test from 'ava';
import { BASE_PER_COIN, WEI_PER_BASE } from '../../ts/ledger/index.js';
import { NoSuchHeightError, getBalance } from '../../ts/services/index.js';
import { NotFoundError } from '../../ts/util/index.js';
import { NOW, alice, bob, openFixtureChain, proposerKey, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

const GENESIS_WEI = 1_000n * BASE_PER_COIN * WEI_PER_BASE;

test('getBalance: wei at latest, a number, earliest and a hash; above the head an error naming the head; unknown hash not found', async (t) => {
  const tmp = tempDir();
  const { chain, db } = await openFixtureChain(tmp.dir);
  t.teardown(async () => {
    await db.close();
    tmp.cleanup();
  });
  // Heights here never ask the engine; `safe`/`finalized` read its finalized height (every committed block is final).
  const ctx = { chain, consensus: { finalizedHeight: () => chain.height } };
  const p = await chain.propose([transfer(alice, 0n)], proposerKey(chain.params, 1), NOW);
  await chain.commit(p);
  const after = GENESIS_WEI - (1_000n + 10_000n) * WEI_PER_BASE;

  t.is(await getBalance(ctx, { address: alice.address }), after);
  t.is(await getBalance(ctx, { address: alice.address.toUpperCase().replace('0X', '0x'), at: 'latest' }), after);
  t.is(await getBalance(ctx, { address: alice.address, at: 'finalized' }), after);
  t.is(await getBalance(ctx, { address: alice.address, at: 0 }), GENESIS_WEI);
  t.is(await getBalance(ctx, { address: alice.address, at: 'earliest' }), GENESIS_WEI);
  t.is(await getBalance(ctx, { address: alice.address, at: { hash: p.block.hash } }), after);
  t.is(await getBalance(ctx, { address: bob.address, at: 1 }), GENESIS_WEI + 1_000n * WEI_PER_BASE);
  t.is(await getBalance(ctx, { address: `0x${'ab'.repeat(20)}` }), 0n);

  const ahead = await t.throwsAsync(async () => getBalance(ctx, { address: alice.address, at: 2 }), {
    instanceOf: NoSuchHeightError,
  });
  t.is(ahead?.message, 'block 2 does not exist (the head is 1)');
  await t.throwsAsync(async () => getBalance(ctx, { address: alice.address, at: { hash: 'ff'.repeat(32) } }), {
    instanceOf: NotFoundError,
  });
});
