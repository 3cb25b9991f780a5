/**
 * native_getStakingRewards: a delegator's exact reward history per epoch and validator
 * (ledger/staking/reward-history.ts). Closed segments come from the payments recorded in receipts
 * (RewardsClaimed, RewardsSettled under the `rewards:<delegator>` index term, read newest first only
 * back to the window's first epoch) and the slash log in state; the open ones from the delegations now.
 */
import { epochOf, epochStart } from '../chain/index.js';
import {
  type EpochReward,
  type RewardSegment,
  commissionByEpoch,
  delegationRewardsByEpoch,
  getValidator,
  openSegments,
  rewardsPaid,
  segmentOfEvent,
  segmentReward,
  slashSettlements,
} from '../ledger/index.js';
import type { ChainContext } from './context.js';

/** native_getStakingRewards default window (spec: the last 30 epochs). */
export const DEFAULT_REWARD_EPOCHS = 30;
/** Reward events read per index page. */
const EVENT_PAGE = 500;

export interface StakingRewards {
  /** Everything the account has earned (wei): delegation rewards paid and pending, and commission. */
  total_lifetime: bigint;
  /** What a ClaimRewards would pay now (wei): pending delegation rewards and unclaimed commission. */
  pending_claimable: bigint;
  from_epoch: number;
  to_epoch: number;
  by_epoch: EpochReward[];
}

/** Closed segments of a delegator's delegations paid at or after `fromHeight` (and every open segment). */
async function segmentsSince(ctx: ChainContext, d: string, fromHeight: number): Promise<RewardSegment[]> {
  const state = ctx.chain.state;
  const segments = openSegments(state, d);
  for (const s of slashSettlements(state, d)) if (s.height >= fromHeight) segments.push({ ...s, claimed: true });
  const term = `rewards:${d}`;
  for (let offset = 0; ; offset += EVENT_PAGE) {
    const page = await ctx.chain.blocks.indexedEvents(term, offset, EVENT_PAGE);
    for (const e of page) {
      if (e.height < fromHeight) return segments;
      const seg = e.event.fields.delegator === d ? segmentOfEvent(e.event) : null;
      if (seg) segments.push(seg);
    }
    if (page.length < EVENT_PAGE) return segments;
  }
}

/**
 * Exact rewards of an account per epoch (from_epoch..to_epoch, default the last 30 epochs up to the
 * head's): each delegation's F1 reward split over the epochs it was earned in, marked claimed when it
 * was paid (claim, delegation change or slash), and a validator's commission per epoch.
 */
export async function stakingRewards(ctx: ChainContext, address: string, from?: number, to?: number): Promise<StakingRewards> {
  await ctx.chain.settled();
  const state = ctx.chain.state;
  const d = address.toLowerCase();
  const current = epochOf(ctx.chain.params, ctx.chain.height);
  const last = Math.min(to ?? current, current);
  const first = from ?? Math.max(0, last - DEFAULT_REWARD_EPOCHS + 1);
  const pendingDelegation = openSegments(state, d).reduce((sum, s) => sum + segmentReward(s), 0n);
  const own = getValidator(state, d);
  const by_epoch =
    first > last
      ? []
      : [
          ...delegationRewardsByEpoch(
            state,
            await segmentsSince(ctx, d, epochStart(ctx.chain.params, first)),
            first,
            last,
            current,
          ),
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
