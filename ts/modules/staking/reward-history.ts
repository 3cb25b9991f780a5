/**
 * Exact per-epoch reward history (docs/tokens-and-staking.md "Reward history"). F1 makes it cheap: a
 * delegation earns `shares × (acc_b − acc_a) / RATIO_SCALE` between two points a and b of its validator's
 * cumulative ratio while its shares stay the same, and every change of shares settles (pays) the pending
 * amount first. So a delegation's life is a chain of segments, each with constant shares and an acc range
 * [from_acc, to_acc]: closed segments are recorded where they are paid (a RewardsClaimed or RewardsSettled
 * event in the receipt, or, for the rare payments made by a slash outside any transaction, a record in
 * state), the open one is the delegation record itself. With the ratio checkpointed at each epoch's end,
 * a segment's reward splits exactly over the epochs it spans. Nothing here runs in block processing
 * except one counter write per payment.
 */
import type { KeyStr, StateOverlay, StateReader } from '../../state/index.js';
import type { NativeEvent } from '../kit/events.js';
import { STAKING_EVENTS } from './events.js';
import { RATIO_SCALE } from './params.js';
import { globalKey } from './keys.js';
import { delegatorValidators, getCheckpoint, getDelegation, getEpochStats, getValidator } from './state.js';

/** A stretch of a delegation with constant shares, between two values of its validator's acc. */
export interface RewardSegment {
  validator: string;
  shares: bigint;
  from_acc: bigint;
  to_acc: bigint;
  /** Paid to the delegator (by a claim, a delegation change or a slash) or still pending. */
  claimed: boolean;
}

/** A payment of a delegation's pending rewards: the segment it closes and the amount (wei). */
export interface Settlement {
  delegator: string;
  validator: string;
  shares: bigint;
  from_acc: bigint;
  to_acc: bigint;
  amount: bigint;
}

/** One row of the history: a validator's reward to the account in an epoch (wei). */
export interface EpochReward {
  epoch: number;
  validator: string;
  reward: bigint;
  claimed: boolean;
  /** `delegation`: F1 rewards of a delegation; `commission`: the validator's own commission. */
  type: 'delegation' | 'commission';
}

const paidKey = (d: string): KeyStr => globalKey(`paid:${d}`);
const slashLogKey = (d: string): KeyStr => globalKey(`slashpaid:${d}`);

/** Delegation rewards paid to a delegator over its life (wei): claims, settlements on changes, slashes. */
export function rewardsPaid(state: StateReader, d: string): bigint {
  const raw = state.get(paidKey(d));
  return raw ? BigInt(raw.toString('utf8')) : 0n;
}

export function addRewardsPaid(state: StateOverlay, d: string, wei: bigint): void {
  if (wei === 0n) return;
  state.set(paidKey(d), Buffer.from((rewardsPaid(state, d) + wei).toString(), 'utf8'));
}

/** Payments a slash made outside any transaction (no receipt to carry an event), oldest first. */
export function slashSettlements(state: StateReader, d: string): (Settlement & { height: number })[] {
  const raw = state.get(slashLogKey(d));
  if (!raw) return [];
  return (JSON.parse(raw.toString('utf8')) as Record<string, string | number>[]).map((o) => ({
    delegator: d,
    validator: o.validator as string,
    shares: BigInt(o.shares),
    from_acc: BigInt(o.from_acc),
    to_acc: BigInt(o.to_acc),
    amount: BigInt(o.amount),
    height: o.height as number,
  }));
}

export function recordSlashSettlement(state: StateOverlay, s: Settlement, height: number): void {
  const list = slashSettlements(state, s.delegator).map(({ delegator: _d, ...rest }) => rest);
  list.push({ validator: s.validator, shares: s.shares, from_acc: s.from_acc, to_acc: s.to_acc, amount: s.amount, height });
  state.set(
    slashLogKey(s.delegator),
    Buffer.from(
      JSON.stringify(list, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      'utf8',
    ),
  );
}

/** The event fields of a settlement (RewardsClaimed, RewardsSettled). */
export const settlementFields = (s: Settlement): Record<string, string> => ({
  delegator: s.delegator,
  validator: s.validator,
  amount: s.amount.toString(),
  acc: s.to_acc.toString(),
  shares: s.shares.toString(),
  from_acc: s.from_acc.toString(),
});

/** The segment a RewardsClaimed or RewardsSettled event closed, or null for any other event. */
export function segmentOfEvent(e: NativeEvent): RewardSegment | null {
  if (e.type !== STAKING_EVENTS.RewardsClaimed && e.type !== STAKING_EVENTS.RewardsSettled) return null;
  const f = e.fields;
  if (f.shares === undefined || f.from_acc === undefined) return null;
  return { validator: f.validator, shares: BigInt(f.shares), from_acc: BigInt(f.from_acc), to_acc: BigInt(f.acc), claimed: true };
}

/** What a segment earned in all (wei, rounded down as its payment is). */
export const segmentReward = (s: RewardSegment): bigint => (s.shares * (s.to_acc - s.from_acc)) / RATIO_SCALE;

/** The open segments of a delegator: each current delegation from its last settlement to the validator's acc now. */
export function openSegments(state: StateReader, d: string): RewardSegment[] {
  const out: RewardSegment[] = [];
  for (const va of delegatorValidators(state, d)) {
    const v = getValidator(state, va);
    const del = getDelegation(state, d, va);
    if (v && del) out.push({ validator: va, shares: del.shares, from_acc: del.start_acc, to_acc: v.acc, claimed: false });
  }
  return out;
}

/** A validator's acc at the end of each epoch first−1..last (the current epoch: its acc now). */
function accBounds(state: StateReader, validator: string, first: number, last: number, current: number): bigint[] {
  const now = getValidator(state, validator)?.acc ?? 0n;
  const out: bigint[] = [];
  for (let e = first - 1; e <= last; e++) {
    if (e < 0) out.push(0n);
    else if (e >= current) out.push(now);
    // No checkpoint: the validator did not exist yet (its acc starts at 0) or staking did not run.
    else out.push(getCheckpoint(state, validator, e)?.acc ?? 0n);
  }
  return out;
}

/**
 * Split segments over epochs first..last (current = the head's epoch, whose end is the acc now). A
 * segment's part in an epoch is its cumulative reward at the epoch's upper bound minus that at the lower
 * bound, each rounded down from the segment's start, so the parts add up exactly to what the segment paid
 * (or has pending). Rows of the same epoch, validator and claimed flag are summed; zero rows are left out.
 */
export function delegationRewardsByEpoch(
  state: StateReader,
  segments: readonly RewardSegment[],
  first: number,
  last: number,
  current: number,
): EpochReward[] {
  const bounds = new Map<string, bigint[]>();
  const rows = new Map<string, EpochReward>();
  for (const s of segments) {
    if (s.shares === 0n || s.to_acc <= s.from_acc) continue;
    let b = bounds.get(s.validator);
    if (!b) bounds.set(s.validator, (b = accBounds(state, s.validator, first, last, current)));
    const earned = (acc: bigint): bigint => (s.shares * (acc - s.from_acc)) / RATIO_SCALE;
    for (let e = first; e <= last; e++) {
      // The epoch's acc range [b[e-1], b[e]] cut to the segment's [from_acc, to_acc].
      let lo = b[e - first];
      if (lo < s.from_acc) lo = s.from_acc;
      let hi = b[e - first + 1];
      if (hi > s.to_acc) hi = s.to_acc;
      if (hi <= lo) continue;
      const reward = earned(hi) - earned(lo);
      if (reward === 0n) continue;
      const key = `${e}|${s.validator}|${s.claimed}`;
      const row = rows.get(key);
      if (row) row.reward += reward;
      else rows.set(key, { epoch: e, validator: s.validator, reward, claimed: s.claimed, type: 'delegation' });
    }
  }
  return [...rows.values()];
}

/**
 * A validator's commission per epoch first..last, split into the part already claimed and the part still
 * unclaimed: a claim takes all commission earned so far, so what was claimed is a prefix of the cumulative
 * commission (checkpointed at each epoch's end).
 */
export function commissionByEpoch(
  state: StateReader,
  validator: string,
  first: number,
  last: number,
  current: number,
): EpochReward[] {
  const v = getValidator(state, validator);
  if (!v) return [];
  const claimedTotal = v.commission_total - v.commission_unclaimed;
  const out: EpochReward[] = [];
  for (let e = first; e <= last; e++) {
    const earned = e > current ? 0n : getEpochStats(state, e, validator).commission;
    if (earned === 0n) continue;
    const end = e >= current ? v.commission_total : (getCheckpoint(state, validator, e)?.commission_total ?? 0n);
    const start = end - earned;
    const claimedPart = claimedTotal <= start ? 0n : claimedTotal >= end ? earned : claimedTotal - start;
    if (claimedPart > 0n) out.push({ epoch: e, validator, reward: claimedPart, claimed: true, type: 'commission' });
    if (earned > claimedPart) out.push({ epoch: e, validator, reward: earned - claimedPart, claimed: false, type: 'commission' });
  }
  return out;
}
