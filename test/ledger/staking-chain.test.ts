import test from 'ava';
import { validateChain, validatorSetAt, type Chain } from '../../ts/chain/index.js';
import {
  TREASURY_ADDRESS,
  getActiveSet,
  getDelegation,
  getTotals,
  getValidator,
  openSegments,
  rewardsPaid,
  segmentReward,
  ZERO_ADDRESS,
} from '../../ts/modules/index.js';
import { invariantViolations } from '../../ts/ledger/index.js';
import { stakingRewards } from '../../ts/services/index.js';
import { getAccount } from '../../ts/state/index.js';
import { toHex } from '../../ts/util/index.js';
import { alice, bob, fixtureParams, openFixtureChain, validatorKeys } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';
import { transfer } from '../helpers/chain-fixture.js';

const COIN = 100_000_000n;

function stakedParams() {
  const p = fixtureParams();
  p.validators = p.validators.map((v) => ({ ...v, stake: 20_000n * COIN }));
  p.alloc.set(alice.address, 50_000n * COIN);
  p.epochLength = 5;
  return p;
}

/** Produce and commit the next block on the real chain; every module's invariants hold after it. */
async function produce(chain: Chain, txs: ReturnType<typeof transfer>[] = []): Promise<void> {
  const h = chain.height + 1;
  const addr = validatorSetAt(chain.params, chain.state, h)[h % validatorSetAt(chain.params, chain.state, h).length].address;
  const key = [...validatorKeys, alice].find((k) => k.address === addr);
  if (!key) throw new Error(`no key for ${addr}`);
  await chain.commit(await chain.propose(txs, key, chain.now()));
  const violations = invariantViolations(chain.state);
  if (violations.length) throw new Error(`invariants broken after block ${chain.height}: ${violations.join('; ')}`);
}

test('a staked chain: DPoS from genesis, the coinbase to the treasury and out to stakers, state survives reopen and /chain/validate replays every root', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openFixtureChain(tmp.dir, stakedParams());
  t.is(chain.consensusAt(1), 'DPoS', 'two staked validators: DPoS without BFT');
  t.deepEqual(
    validatorSetAt(chain.params, chain.state, 1).map((v) => v.power),
    [20_000n * COIN, 20_000n * COIN],
  );
  const v0 = validatorKeys[0].address;
  const op = (nonce: bigint, body: unknown) =>
    transfer(alice, nonce, { to: ZERO_ADDRESS, amount: 0n, fee: 10_000n, data: JSON.stringify(body) });
  await produce(chain, [
    op(0n, { Delegate: { validator: v0, amount: 5_000 * 1e8 } }),
    op(1n, { RegisterValidator: { name: 'alice', stake: 15_000 * 1e8, commission_bps: 1_000 } }),
  ]);
  for (let i = 0; i < 12; i++) await produce(chain, i === 6 ? [op(2n, { ClaimRewards: { validator: null } })] : []);
  t.true(
    getActiveSet(chain.state)?.members.some((m) => m.address === alice.address),
    'alice joined at an epoch boundary',
  );
  t.true(getTotals(chain.state).rewards_pool > 0n, 'rewards distributed and unclaimed');
  t.true(getAccount(chain.state, TREASURY_ADDRESS).balance < COIN, 'the treasury keeps only rounding dust');
  // The reward history (native_getStakingRewards) from the chain's event index and state: exact per epoch,
  // claimed rows adding up to what was paid, unclaimed rows to what a claim would pay now.
  const history = await stakingRewards({ chain }, alice.address, 0);
  const rows = (type: string, claimed: boolean) =>
    history.by_epoch.filter((r) => r.type === type && r.claimed === claimed).reduce((a, r) => a + r.reward, 0n);
  const own = getValidator(chain.state, alice.address)!;
  const pendingDelegations = openSegments(chain.state, alice.address).reduce((a, s) => a + segmentReward(s), 0n);
  t.true(rewardsPaid(chain.state, alice.address) > 0n, 'the claim paid delegation rewards');
  t.is(rows('delegation', true), rewardsPaid(chain.state, alice.address));
  t.is(rows('delegation', false), pendingDelegations);
  t.true(
    own.commission_total > own.commission_unclaimed && own.commission_unclaimed > 0n,
    'commission claimed once, earned since',
  );
  t.is(rows('commission', true), own.commission_total - own.commission_unclaimed);
  t.is(rows('commission', false), own.commission_unclaimed);
  t.is(history.pending_claimable, pendingDelegations + own.commission_unclaimed);
  t.is(history.total_lifetime, rewardsPaid(chain.state, alice.address) + pendingDelegations + own.commission_total);
  t.deepEqual([history.from_epoch, history.to_epoch], [0, 2]);

  const root = chain.head.state_root;
  const del = getDelegation(chain.state, alice.address, v0);
  await db.close();
  ({ chain, db } = await openFixtureChain(tmp.dir, stakedParams()));
  t.is(chain.head.state_root, root);
  t.deepEqual(getDelegation(chain.state, alice.address, v0), del);
  t.is(getValidator(chain.state, alice.address)?.commission_bps, 1_000n);
  t.like(await validateChain(chain), { valid: true, checked_blocks: 14 });
  t.is(toHex(chain.state.root()), root);
  await db.close();
  void bob;
});
