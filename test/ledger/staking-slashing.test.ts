import test from 'ava';
import {
  DOUBLE_SIGN_SLASH_BPS,
  UNBONDING_EPOCHS,
  delegationRewardsByEpoch,
  getDelegation,
  getValidator,
  openSegments,
  pendingReward,
  redelegationEntries,
  rewardsPaid,
  segmentOfEvent,
  segmentReward,
  sharesValue,
  slashSettlements,
  type RewardSegment,
  getSupply,
  BASE_PER_COIN,
  WEI_PER_BASE,
} from '../../ts/modules/index.js';
import type { ExecutionResult } from '../../ts/execution/index.js';
import { getAccount } from '../../ts/state/index.js';
import { StakingHarness, probe, stakingParams, stakingPeople, stakingValidators } from '../helpers/staking-harness.js';

const COIN = BASE_PER_COIN;
const EPOCH = 2;
const [alice, bob, carol, dave, erin] = stakingPeople;
const [v0, v1, v2, v3] = stakingValidators.map((k) => k.address);

/** A harness that checks the supply invariant after every block and keeps every reward payment event. */
class Chain extends StakingHarness {
  readonly segments: RewardSegment[] = [];
  constructor(private readonly t: { is: (a: unknown, b: unknown, m?: string) => void }) {
    super(stakingParams({}, [], EPOCH));
  }
  override async block(...args: Parameters<StakingHarness['block']>): Promise<ExecutionResult> {
    const r = await super.block(...args);
    for (const receipt of r.receipts)
      for (const e of receipt.events ?? []) {
        const seg = segmentOfEvent(e);
        if (seg && e.fields.delegator === alice.address) this.segments.push(seg);
      }
    const { held, issued } = this.supplyCheck();
    this.t.is(held, issued, `supply invariant at block ${this.height}`);
    return r;
  }
  async until(height: number): Promise<void> {
    while (this.height < height) await this.block();
  }
  value(d: string, v: string): bigint {
    const del = getDelegation(this.state, d, v);
    return del ? sharesValue(getValidator(this.state, v)!, del.shares) : 0n;
  }
}

const redelegate = (from: string, to: string, amount: bigint) => ({
  Redelegate: { from_validator: from, to_validator: to, amount },
});

test('redelegated stake is slashed for the source validator’s earlier infractions while in its unbonding period, and with its destination', async (t) => {
  const h = new Chain(t);
  await h.block([
    h.op(alice, { Delegate: { validator: v0, amount: 1_000n * COIN } }),
    h.op(bob, { Delegate: { validator: v0, amount: 1_000n * COIN } }),
    h.op(carol, { Delegate: { validator: v0, amount: 1_000n * COIN } }),
  ]);
  // carol leaves v0 before the infraction (height 10): her redelegation owes nothing for it.
  await h.block([h.op(carol, redelegate(v0, v3, 500n * COIN))]);
  // dave redelegates away from v2 at height 3; v2's infraction at height 2 comes to light only after it matured.
  await h.block([
    h.op(dave, { Delegate: { validator: v2, amount: 1_000n * COIN } }),
    h.op(erin, { Delegate: { validator: v2, amount: 1_000n * COIN } }),
  ]);
  await h.block([h.op(dave, redelegate(v2, v3, 400n * COIN))]);
  await h.until(10);
  // After v0's infraction at height 10: alice and bob redelegate away; bob then undelegates at the destination.
  await h.block([h.op(alice, redelegate(v0, v1, 600n * COIN)), h.op(bob, redelegate(v0, v2, 300n * COIN))]);
  await h.block([h.op(bob, { Undelegate: { validator: v2, amount: 300n * COIN } })]);
  t.regex(
    probe(h, alice, redelegate(v1, v2, 1n)) ?? 'accepted',
    /a redelegation into 0x[0-9a-f]{40} is in flight until epoch 29: stake redelegated to a validator cannot be redelegated again/,
  );
  await h.until(19);

  // Block 20 includes the evidence that v0 double-signed at height 10.
  const aliceShares = getDelegation(h.state, alice.address, v1)!.shares;
  const aliceAtV1 = h.value(alice.address, v1);
  const carolAtV3 = h.value(carol.address, v3);
  const pending = pendingReward(getValidator(h.state, v1)!, getDelegation(h.state, alice.address, v1)!);
  const balance = getAccount(h.state, alice.address).balance;
  const paidBefore = rewardsPaid(h.state, alice.address);
  const v0Tokens = getValidator(h.state, v0)!.tokens;
  const v1Tokens = getValidator(h.state, v1)!.tokens;
  const burned = getSupply(h.state).burned;
  t.true(pending > 0n, 'alice has rewards pending at v1');
  await h.block([], { doubleSigns: [{ validator: v0, height: 10 }] });

  t.is(getValidator(h.state, v0)!.status, 'tombstoned');
  const v0Cut = v0Tokens - getValidator(h.state, v0)!.tokens;
  t.is(v0Cut, (v0Tokens * DOUBLE_SIGN_SLASH_BPS) / 10_000n);
  // alice's redelegated shares at v1 lose 5 % (Cosmos: the fraction of the destination shares the move created).
  const cutShares = (aliceShares * DOUBLE_SIGN_SLASH_BPS) / 10_000n;
  t.is(getDelegation(h.state, alice.address, v1)!.shares, aliceShares - cutShares);
  const aliceCut = aliceAtV1 - h.value(alice.address, v1);
  t.true(aliceCut >= 30n * COIN - 1n && aliceCut <= 30n * COIN, `5 % of 600 coins: ${aliceCut}`);
  t.is(v1Tokens - getValidator(h.state, v1)!.tokens, aliceCut, "only alice's part leaves v1");
  t.is(getSupply(h.state).burned - burned, (v0Cut + aliceCut) * WEI_PER_BASE, 'both cuts are burned');
  t.is(h.value(carol.address, v3), carolAtV3, 'a redelegation made before the infraction is not slashed');
  t.is(getDelegation(h.state, bob.address, v2), null, "bob's redelegated stake had left v2: nothing to take (as in Cosmos)");
  // The slash paid alice's pending rewards first; the reward history keeps the payment.
  t.is(getAccount(h.state, alice.address).balance, balance + pending);
  t.is(rewardsPaid(h.state, alice.address), paidBefore + pending);
  const log = slashSettlements(h.state, alice.address);
  t.is(log.length, 1);
  t.like(log[0], { validator: v1, amount: pending, shares: aliceShares, height: 20 });

  // The destination's own infraction slashes the redelegated stake with everyone else's there.
  const aliceBefore = h.value(alice.address, v1);
  await h.block([], { doubleSigns: [{ validator: v1, height: 20 }] });
  const lost = aliceBefore - h.value(alice.address, v1);
  t.true(lost >= (aliceBefore * 5n) / 100n - 1n && lost <= (aliceBefore * 5n) / 100n + 1n, `5 % with v1: ${lost}`);

  // v2 double-signed at height 2: dave's redelegation (height 3) matured at epoch 1 + 24, so it keeps its stake.
  await h.until((1 + UNBONDING_EPOCHS) * EPOCH + 1);
  t.deepEqual(redelegationEntries(h.state, v2, 1), [], 'matured entries are dropped');
  const daveAtV3 = h.value(dave.address, v3);
  const erinAtV2 = h.value(erin.address, v2);
  await h.block([], { doubleSigns: [{ validator: v2, height: 2 }] });
  t.is(h.value(dave.address, v3), daveAtV3);
  t.true(h.value(erin.address, v2) < erinAtV2, 'the stake still at v2 is slashed');

  // alice's reward history still adds up: paid rows = what was paid (claims, changes, the slash), open rows = pending.
  const segments = [
    ...h.segments,
    ...slashSettlements(h.state, alice.address).map((s) => ({ ...s, claimed: true })),
    ...openSegments(h.state, alice.address),
  ];
  const epoch = Math.floor(h.height / EPOCH);
  const rows = delegationRewardsByEpoch(h.state, segments, 0, epoch, epoch);
  const sum = (claimed: boolean) => rows.filter((r) => r.claimed === claimed).reduce((a, r) => a + r.reward, 0n);
  t.is(sum(true), rewardsPaid(h.state, alice.address));
  t.is(
    sum(false),
    openSegments(h.state, alice.address).reduce((a, s) => a + segmentReward(s), 0n),
  );
  t.true(sum(false) > 0n && rows.some((r) => r.validator === v0 && r.claimed));
});
