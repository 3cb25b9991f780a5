/**
 * The staking bookkeeping every operation and the end-of-block work share: share accounting (Cosmos
 * x/staking: a delegation holds shares of its validator's tokens, so a slash is one write), F1 rewards
 * (x/distribution: a cumulative reward per share per validator, so a block's distribution is O(1) per
 * validator and a claim O(1) whatever the number of delegators), unbonding pools and slashing.
 */
import { getAccount, putAccount, type StateOverlay } from '../../state/index.js';
import { getSupply, putSupply } from '../kit/supply.js';
import { baseToWei } from '../kit/units.js';
import { RATIO_SCALE, UNBONDING_EPOCHS } from './params.js';
import { type RedelegationEntry, redelegationEntries } from './redelegations.js';
import { type Settlement, addRewardsPaid, recordSlashSettlement } from './reward-history.js';
import {
  type ActiveMember,
  type DelegationRecord,
  type ValidatorRecord,
  getActiveSet,
  getDelegation,
  getPool,
  getTotals,
  getValidator,
  putActiveSet,
  putDelegation,
  putPool,
  putTotals,
  putValidator,
} from './state.js';

/** Value in tokens (base units) of a number of shares of a validator (rounded down). */
export const sharesValue = (v: ValidatorRecord, shares: bigint): bigint =>
  v.shares === 0n ? 0n : (shares * v.tokens) / v.shares;

/** Rewards (wei) a delegation has earned since it was last settled (rounded down: the dust stays in the pool). */
export const pendingReward = (v: ValidatorRecord, d: DelegationRecord): bigint =>
  (d.shares * (v.acc - d.start_acc)) / RATIO_SCALE;

export function credit(state: StateOverlay, address: string, wei: bigint): void {
  if (wei === 0n) return;
  const a = getAccount(state, address);
  a.balance += wei;
  putAccount(state, address, a);
}

/** Where a payment of pending rewards is recorded: an event of the transaction, or the slash log in state. */
export type SettlementSink = (s: Settlement) => void;

/**
 * Pay a delegation's pending rewards out of the rewards pool to the delegator and restart its F1 period
 * at the validator's current ratio. Returns the payment (the segment it closes), or null when nothing was
 * due; `sink` records it for the reward history.
 */
export function settleRewards(
  state: StateOverlay,
  delegator: string,
  v: ValidatorRecord,
  d: DelegationRecord,
  sink?: SettlementSink,
): Settlement | null {
  const due = pendingReward(v, d);
  const from = d.start_acc;
  d.start_acc = v.acc;
  if (due === 0n) return null;
  credit(state, delegator, due);
  const totals = getTotals(state);
  totals.rewards_pool -= due;
  putTotals(state, totals);
  addRewardsPaid(state, delegator, due);
  const s: Settlement = { delegator, validator: v.address, shares: d.shares, from_acc: from, to_acc: v.acc, amount: due };
  sink?.(s);
  return s;
}

/** Bond amount (base units) from delegator into validator: new shares at the current share price. */
export function bond(
  state: StateOverlay,
  delegator: string,
  v: ValidatorRecord,
  amount: bigint,
  epoch: number,
  sink?: SettlementSink,
): bigint {
  const d = getDelegation(state, delegator, v.address) ?? { shares: 0n, start_acc: v.acc, since_epoch: epoch };
  settleRewards(state, delegator, v, d, sink);
  const shares = v.tokens === 0n || v.shares === 0n ? amount : (amount * v.shares) / v.tokens;
  d.shares += shares;
  v.shares += shares;
  v.tokens += amount;
  putDelegation(state, delegator, v.address, d);
  putValidator(state, v);
  const totals = getTotals(state);
  totals.bonded += amount;
  putTotals(state, totals);
  return shares;
}

/**
 * Remove amount (base units) of a delegation's value from the validator (shares rounded up, never more
 * than the delegation holds); returns the tokens actually removed. Rewards are settled first.
 */
export function unbond(
  state: StateOverlay,
  delegator: string,
  v: ValidatorRecord,
  d: DelegationRecord,
  amount: bigint,
  sink?: SettlementSink,
): bigint {
  let shares = (amount * v.shares + v.tokens - 1n) / v.tokens;
  if (shares > d.shares) shares = d.shares;
  let tokens = sharesValue(v, shares);
  if (tokens > amount) tokens = amount;
  return unbondShares(state, delegator, v, d, shares, tokens, sink);
}

/** Remove shares (worth tokens) from a delegation, rewards settled first; returns tokens. */
function unbondShares(
  state: StateOverlay,
  delegator: string,
  v: ValidatorRecord,
  d: DelegationRecord,
  shares: bigint,
  tokens: bigint,
  sink?: SettlementSink,
): bigint {
  settleRewards(state, delegator, v, d, sink);
  d.shares -= shares;
  v.shares -= shares;
  v.tokens -= tokens;
  if (v.shares === 0n) v.tokens = 0n;
  putDelegation(state, delegator, v.address, d);
  putValidator(state, v);
  const totals = getTotals(state);
  totals.bonded -= tokens;
  putTotals(state, totals);
  return tokens;
}

/** Put tokens into the validator's unbonding pool maturing at complete_epoch; returns the entry's pool shares. */
export function addToPool(state: StateOverlay, validator: string, completeEpoch: number, tokens: bigint): bigint {
  const pool = getPool(state, validator, completeEpoch);
  const shares = pool.tokens === 0n || pool.shares === 0n ? tokens : (tokens * pool.shares) / pool.tokens;
  pool.tokens += tokens;
  pool.shares += shares;
  putPool(state, validator, completeEpoch, pool);
  const totals = getTotals(state);
  totals.unbonding += tokens;
  putTotals(state, totals);
  return shares;
}

function burn(state: StateOverlay, base: bigint): void {
  if (base === 0n) return;
  const s = getSupply(state);
  putSupply(state, { minted: s.minted, burned: s.burned + baseToWei(base) });
}

/** When an infraction happened, or when a slash applies: a height and its epoch. */
export interface ChainPoint {
  height: number;
  epoch: number;
}

/**
 * Slash bps of a validator's bonded tokens, of its unbonding pools begun at or after the infraction's
 * epoch (still maturing), and of the stake redelegated away from it at or after the infraction's height
 * and still in its unbonding period (taken from the delegation at the destination, as Cosmos does); the
 * slashed coins are burned. O(UNBONDING_EPOCHS) pools plus the validator's own recent redelegation
 * entries, never a pass over its delegators.
 */
export function slash(state: StateOverlay, v: ValidatorRecord, bps: bigint, infraction: ChainPoint, now: ChainPoint): bigint {
  const bondedCut = (v.tokens * bps) / 10_000n;
  v.tokens -= bondedCut;
  const totals = getTotals(state);
  totals.bonded -= bondedCut;
  let cut = bondedCut;
  for (let e = now.epoch + 1; e <= now.epoch + UNBONDING_EPOCHS; e++) {
    if (e - UNBONDING_EPOCHS < infraction.epoch) continue;
    const pool = getPool(state, v.address, e);
    if (pool.tokens === 0n) continue;
    const c = (pool.tokens * bps) / 10_000n;
    pool.tokens -= c;
    totals.unbonding -= c;
    cut += c;
    putPool(state, v.address, e, pool);
  }
  putTotals(state, totals);
  putValidator(state, v);
  for (let e = Math.max(infraction.epoch, now.epoch - UNBONDING_EPOCHS + 1); e <= now.epoch; e++) {
    for (const r of redelegationEntries(state, v.address, e)) {
      if (r.creation_height >= infraction.height) cut += slashRedelegation(state, r, bps, now.height);
    }
  }
  burn(state, cut);
  return cut;
}

/**
 * The source's share of a redelegation: bps of the destination shares it created, unbonded from the
 * delegation at the destination (never more than it still holds); its pending rewards are paid first and
 * the payment logged in state for the reward history. Returns the tokens removed (to burn).
 */
function slashRedelegation(state: StateOverlay, r: RedelegationEntry, bps: bigint, height: number): bigint {
  let shares = (r.dst_shares * bps) / 10_000n;
  const dst = getValidator(state, r.to);
  const d = getDelegation(state, r.delegator, r.to);
  if (shares === 0n || !dst || !d) return 0n;
  if (shares > d.shares) shares = d.shares;
  const tokens = sharesValue(dst, shares);
  return unbondShares(state, r.delegator, dst, d, shares, tokens, (s) => recordSlashSettlement(state, s, height));
}

/**
 * Take a validator out of the active set in force (jailed or tombstoned at block `height`, effective from
 * the next block), unless it is the last member.
 */
export function removeFromActiveSet(state: StateOverlay, address: string, height: number): boolean {
  const set = getActiveSet(state);
  if (!set) return false;
  const members: ActiveMember[] = set.members.filter((m) => m.address !== address);
  if (members.length === set.members.length || members.length === 0) return false;
  putActiveSet(state, { epoch: set.epoch, members }, height);
  return true;
}
