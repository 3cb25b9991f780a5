/**
 * native_getStakingRewards: a delegator's exact reward history per epoch and validator
 * (modules/staking/reward-history.ts, queries.ts rewardHistory). Closed segments come from the payments recorded in receipts
 * (RewardsClaimed, RewardsSettled under the `rewards:<delegator>` index term, read newest first only
 * back to the window's first epoch) and the slash log in state; the open ones from the delegations now.
 */
import { epochOf, epochStart } from '../chain/index.js';
import {
  type RewardHistory,
  type RewardSegment,
  openSegments,
  rewardHistory,
  segmentOfEvent,
  slashSettlements,
} from '../modules/index.js';
import type { ChainContext } from './context.js';

/** native_getStakingRewards default window (spec: the last 30 epochs). */
export const DEFAULT_REWARD_EPOCHS = 30;
/** Reward events read per index page. */
const EVENT_PAGE = 500;

/** native_getStakingRewards' answer (the staking module's RewardHistory). */
export type StakingRewards = RewardHistory;

/** Closed segments of a delegator's delegations paid at or after `fromHeight` (and every open segment). */
async function segmentsSince(
  ctx: ChainContext,
  d: string,
  open: readonly RewardSegment[],
  fromHeight: number,
): Promise<RewardSegment[]> {
  const state = ctx.chain.state;
  const segments = [...open];
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
  const open = openSegments(state, d);
  const segments = first > last ? [] : await segmentsSince(ctx, d, open, epochStart(ctx.chain.params, first));
  return rewardHistory(state, d, open, segments, { first, last, current });
}
