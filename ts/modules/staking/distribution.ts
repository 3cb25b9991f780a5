/**
 * Distribution (Cosmos x/distribution, F1): the treasury's coins go out to the active set by stake at the
 * end of every block, each validator's commission first and the rest to its delegators through the
 * validator's cumulative reward per share (acc), so a block costs O(1) per validator and a claim O(1)
 * whatever the number of delegators. Settling and claiming are core.ts `settleRewards` and the
 * ClaimRewards handler; the per-epoch history is reward-history.ts.
 */
import { type StateOverlay, getAccount, putAccount } from '../../state/index.js';
import { TREASURY_ADDRESS } from '../kit/rewards.js';
import { RATIO_SCALE } from './params.js';
import { getActiveSet, getEpochStats, getTotals, getValidator, putEpochStats, putTotals, putValidator } from './state.js';

/**
 * Distribute the treasury's balance over the active set by stake (whole base units per validator; the
 * rest stays in the treasury for the next block): commission first, the remainder to the delegators
 * through the validator's cumulative reward per share. O(1) per validator, nothing per delegator.
 */
export function distributeTreasury(state: StateOverlay, epoch: number): void {
  const set = getActiveSet(state);
  if (!set) return;
  const treasury = getAccount(state, TREASURY_ADDRESS);
  const pot = treasury.balance;
  if (pot === 0n) return;
  const validators = set.members
    .map((m) => getValidator(state, m.address))
    .filter((v): v is NonNullable<typeof v> => v !== null && v.status === 'bonded' && v.shares > 0n);
  let total = 0n;
  for (const v of validators) total += v.tokens;
  if (total === 0n) return;
  let paid = 0n;
  const totals = getTotals(state);
  for (const v of validators) {
    const share = (pot * v.tokens) / total;
    if (share === 0n) continue;
    const commission = (share * v.commission_bps) / 10_000n;
    const delegators = share - commission;
    v.acc += (delegators * RATIO_SCALE) / v.shares;
    v.commission_unclaimed += commission;
    v.commission_total += commission;
    v.rewards_total += delegators;
    putValidator(state, v);
    const stats = getEpochStats(state, epoch, v.address);
    stats.rewards += delegators;
    stats.commission += commission;
    putEpochStats(state, epoch, v.address, stats);
    paid += share;
  }
  treasury.balance -= paid;
  putAccount(state, TREASURY_ADDRESS, treasury);
  totals.rewards_pool += paid;
  putTotals(state, totals);
}
