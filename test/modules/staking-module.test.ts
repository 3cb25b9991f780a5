import test from 'ava';
import { invariantViolations, moduleOf } from '../../ts/ledger/index.js';
import {
  MIN_SELF_STAKE_BASE,
  NotJailed,
  NothingToClaim,
  OperationFailed,
  STAKING_EVENTS,
  STAKING_NS,
  STAKING_OPERATIONS,
  UnknownValidator,
  getActiveSet,
  getTotals,
  getValidator,
  putActiveSet,
  putTotals,
  putValidator,
  stakingModule,
} from '../../ts/modules/index.js';
import { NS, StateOverlay } from '../../ts/state/index.js';
import { StakingHarness, nextEnv, stakingParams, stakingPeople, stakingValidators } from '../helpers/staking-harness.js';

const COIN = 100_000_000n;
const [alice, bob] = stakingPeople;
const v0 = stakingValidators[0].address;

/** A staked harness two blocks in: a new validator, a delegation, rewards distributed. */
async function staked(): Promise<StakingHarness> {
  const h = new StakingHarness(stakingParams());
  await h.block([
    h.op(alice, { RegisterValidator: { name: 'alice', stake: MIN_SELF_STAKE_BASE, commission_bps: 500 } }),
    h.op(bob, { Delegate: { validator: v0, amount: 1_000n * COIN } }),
  ]);
  await h.block();
  return h;
}

/** Write `edit`'s changes into the harness's state (a deliberately broken record). */
function corrupt(h: StakingHarness, edit: (o: StateOverlay) => void): void {
  const o = new StateOverlay(h.state);
  edit(o);
  h.state.applyChanges(o.changes);
}

test('the staking module owns its rows, namespaces and events; the executor dispatches its variants to it', (t) => {
  t.deepEqual(Object.keys(STAKING_OPERATIONS), [
    'RegisterValidator',
    'Delegate',
    'Undelegate',
    'Redelegate',
    'ClaimRewards',
    'UpdateCommission',
    'Unjail',
    'AddAuthority',
  ]);
  for (const op of Object.keys(STAKING_OPERATIONS)) t.is(moduleOf(op as never), stakingModule, op);
  t.deepEqual([...stakingModule.namespaces], [0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b]);
  t.false(
    Object.values(NS).some((b) => (Object.values(STAKING_NS) as number[]).includes(b)),
    'no byte left in state NS',
  );
  t.is(stakingModule.events, STAKING_EVENTS);
  t.deepEqual(stakingModule.indexTerms({ type: STAKING_EVENTS.RewardsSettled, fields: { delegator: '0xd' } }), ['rewards:0xd']);
});

test('the staking invariants hold after real blocks, and each one catches a broken record', async (t) => {
  const h = await staked();
  t.true(getTotals(h.state).rewards_pool > 0n, 'rewards were distributed');
  t.deepEqual(invariantViolations(h.state), []);

  const bonded = await staked();
  corrupt(bonded, (o) => putTotals(o, { ...getTotals(o), bonded: getTotals(o).bonded + 1n }));
  t.true(invariantViolations(bonded.state).some((v) => v.startsWith('staking/bonded-pool-equals-delegations: bonded pool')));

  const shares = await staked();
  corrupt(shares, (o) => {
    const v = getValidator(o, v0)!;
    putValidator(o, { ...v, shares: v.shares + 1n });
  });
  t.true(invariantViolations(shares.state).some((v) => v.includes(`validator ${v0} issued`)));

  const rewards = await staked();
  corrupt(rewards, (o) => {
    const v = getValidator(o, v0)!;
    putValidator(o, { ...v, commission_unclaimed: v.commission_unclaimed + getTotals(o).rewards_pool + 1n });
  });
  t.true(
    invariantViolations(rewards.state).some((v) => v.startsWith('distribution/outstanding-rewards-within-pool: outstanding')),
  );

  const jailed = await staked();
  corrupt(jailed, (o) => {
    const v = getValidator(o, v0)!;
    putValidator(o, { ...v, status: 'jailed' });
  });
  t.true(getActiveSet(jailed.state)!.members.some((m) => m.address === v0));
  t.deepEqual(invariantViolations(jailed.state), [
    `slashing/jailed-not-active: jailed validator ${v0} is in the active set of epoch 0`,
  ]);
  // The last member of a set stays even when jailed (a chain never loses its last proposer).
  corrupt(jailed, (o) => putActiveSet(o, { epoch: 0, members: getActiveSet(o)!.members.filter((m) => m.address === v0) }));
  t.deepEqual(invariantViolations(jailed.state), []);
});

test('each staking failure is its own class with a stable code and the message it always had', async (t) => {
  const h = await staked();
  const env = nextEnv(h);
  const tx = (from: string) => ({ from_address: from, to_address: '', amount: 0n, fee: 0n, nonce: 0n, public_key: '' });
  const run = (f: () => void): OperationFailed => {
    const err = t.throws(f);
    if (!(err instanceof OperationFailed)) throw new Error('not an OperationFailed');
    return err;
  };
  const call = <F>(from: string, name: string, fields: F) => ({
    state: new StateOverlay(h.state),
    tx: tx(from),
    op: { name, family: 'staking' as const, fields },
    env,
    emit: () => {},
  });
  const unknown = run(() =>
    stakingModule.handlers.Delegate(call(bob.address, 'Delegate', { validator: bob.address, amount: 1n })),
  );
  t.true(unknown instanceof UnknownValidator);
  t.like(unknown, { code: 'staking/unknown_validator', message: `unknown validator ${bob.address}` });
  const notJailed = run(() => stakingModule.handlers.Unjail(call(v0, 'Unjail', {})));
  t.true(notJailed instanceof NotJailed);
  t.like(notJailed, { code: 'slashing/not_jailed', message: 'validator is not jailed' });
  const nothing = run(() =>
    stakingModule.handlers.ClaimRewards(call(stakingPeople[5].address, 'ClaimRewards', { validator: null })),
  );
  t.true(nothing instanceof NothingToClaim);
  t.like(nothing, { code: 'distribution/nothing_to_claim', message: 'nothing to claim' });
});
