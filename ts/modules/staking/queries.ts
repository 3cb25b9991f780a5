/**
 * The staking module's read queries (Cosmos keeper/grpc_query.go) over a state: what REST, JSON-RPC, gRPC
 * and the explorer show of validators, delegations, unbonding entries and rewards. They read only this
 * module's records; services/ (staking-queries.ts, validator-queries.ts, staking-rewards.ts) adds what
 * needs the chain (the active set of the next height, the indexes, the event log) and speaks to the transports.
 */
import type { StateReader } from '../../state/index.js';
import { pendingReward, sharesValue } from './core.js';
import {
  type EpochReward,
  type RewardSegment,
  commissionByEpoch,
  delegationRewardsByEpoch,
  rewardsPaid,
  segmentReward,
} from './reward-history.js';
import {
  type ValidatorRecord,
  getDelegation,
  getEpochStats,
  getPool,
  getSigningInfo,
  getUnbondingShares,
  getValidator,
} from './state.js';

export type ValidatorStatusView = 'active' | 'jailed' | 'tombstoned' | 'unbonding';

/** Spec status: in the active set = active; jailed; tombstoned; registered but outside the active set = unbonding. */
export function statusOf(v: ValidatorRecord, active: ReadonlySet<string>): ValidatorStatusView {
  if (v.status === 'tombstoned') return 'tombstoned';
  if (v.status === 'jailed') return 'jailed';
  return active.has(v.address) ? 'active' : 'unbonding';
}

/** signed / (signed + missed) over the validator's sliding window; 1.0 before its first record. */
export function uptimeOf(state: StateReader, address: string): number {
  const info = getSigningInfo(state, address);
  if (info.count === 0) return 1.0;
  return Math.round(((info.count - info.missed) / info.count) * 1e6) / 1e6;
}

/** A validator's bonded stake split into its self-stake and what others delegated (base units). */
export interface ValidatorStake {
  record: ValidatorRecord | null;
  stake: bigint;
  self_stake: bigint;
  delegated_stake: bigint;
}

export function validatorStake(state: StateReader, address: string): ValidatorStake {
  const v = getValidator(state, address);
  const self = v ? getDelegation(state, address, address) : null;
  const selfStake = v && self ? sharesValue(v, self.shares) : 0n;
  return { record: v, stake: v?.tokens ?? 0n, self_stake: selfStake, delegated_stake: (v?.tokens ?? 0n) - selfStake };
}

/** Blocks a validator produced in an epoch (DPoS records; 0 before staking runs). */
export const blocksProducedIn = (state: StateReader, epoch: number, address: string): number =>
  getEpochStats(state, epoch, address).blocks;

/** One delegation now: its value (base units), pending F1 reward (wei) and the epoch it began; zeros when none. */
export interface DelegationValue {
  amount: bigint;
  pending_reward_wei: bigint;
  since_epoch: number;
  exists: boolean;
}

export function delegationValue(state: StateReader, delegator: string, v: ValidatorRecord): DelegationValue {
  const d = getDelegation(state, delegator, v.address);
  return d
    ? { amount: sharesValue(v, d.shares), pending_reward_wei: pendingReward(v, d), since_epoch: d.since_epoch, exists: true }
    : { amount: 0n, pending_reward_wei: 0n, since_epoch: 0, exists: false };
}

/** The current value (base units) of a delegator's unbonding entry with a validator maturing at `epoch`. */
export function unbondingValue(state: StateReader, delegator: string, validator: string, epoch: number): bigint {
  const shares = getUnbondingShares(state, delegator, validator, epoch);
  const pool = getPool(state, validator, epoch);
  return pool.shares === 0n ? 0n : (shares * pool.tokens) / pool.shares;
}

/** What the stake-weighted distribution paid a validator in an epoch (wei): its commission and its delegators' part. */
export function epochDistribution(state: StateReader, epoch: number, address: string): { commission: bigint; rewards: bigint } {
  const s = getEpochStats(state, epoch, address);
  return { commission: s.commission, rewards: s.rewards };
}

/** An account's staking rewards over epochs first..last (wei): native_getStakingRewards. */
export interface RewardHistory {
  /** Everything the account has earned (wei): delegation rewards paid and pending, and commission. */
  total_lifetime: bigint;
  /** What a ClaimRewards would pay now (wei): pending delegation rewards and unclaimed commission. */
  pending_claimable: bigint;
  from_epoch: number;
  to_epoch: number;
  by_epoch: EpochReward[];
}

/**
 * Exact rewards of account `d` per epoch first..last (current: the head's epoch): `segments` are its
 * delegations' segments (the open ones and those closed since the window's first epoch, which the caller
 * reads from the event index), split over the epochs they were earned in, plus its commission per epoch.
 */
export function rewardHistory(
  state: StateReader,
  d: string,
  open: readonly RewardSegment[],
  segments: readonly RewardSegment[],
  window: { first: number; last: number; current: number },
): RewardHistory {
  const { first, last, current } = window;
  const pendingDelegation = open.reduce((sum, s) => sum + segmentReward(s), 0n);
  const own = getValidator(state, d);
  const by_epoch =
    first > last
      ? []
      : [
          ...delegationRewardsByEpoch(state, segments, first, last, current),
          ...commissionByEpoch(state, d, first, last, current),
        ].sort((a, b) => a.epoch - b.epoch || (a.validator < b.validator ? -1 : a.validator > b.validator ? 1 : 0));
  return {
    total_lifetime: rewardsPaid(state, d) + pendingDelegation + (own?.commission_total ?? 0n),
    pending_claimable: pendingDelegation + (own?.commission_unclaimed ?? 0n),
    from_epoch: first,
    to_epoch: last,
    by_epoch,
  };
}
