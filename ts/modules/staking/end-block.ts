/**
 * The staking module's end-of-block work, in its fixed order: signing records and downtime jailing
 * (slashing.ts, x/slashing), the stake-weighted distribution of the treasury (distribution.ts,
 * x/distribution, F1), and at the last block of an epoch the maturing of unbonding entries, the epoch's
 * reward-ratio checkpoints and the next epoch's active set (x/staking).
 */
import type { StateOverlay } from '../../state/index.js';
import type { OperationEnv } from '../kit/context.js';
import { baseToWei } from '../kit/units.js';
import { credit, sharesValue } from './core.js';
import { distributeTreasury } from './distribution.js';
import { MAX_ACTIVE_VALIDATORS, MIN_SELF_STAKE_BASE, UNBONDING_EPOCHS } from './params.js';
import { dropRedelegationEntries } from './redelegations.js';
import { epochOf, stakingActiveAt } from './schedule.js';
import { recordSignatures } from './slashing.js';
import {
  type ActiveMember,
  getDelegation,
  getPool,
  getTotals,
  getUnbondingShares,
  getValidator,
  putActiveSet,
  putCheckpoint,
  putPool,
  putTotals,
  putUnbondingShares,
  queueTake,
  registry,
} from './state.js';

export function stakingEndBlock(state: StateOverlay, env: OperationEnv): void {
  // Nothing to do (and nothing written) on a chain where no validator ever bonded stake.
  if (!stakingActiveAt(env) || registry(state).length === 0) return;
  const epoch = epochOf(env);
  recordSignatures(state, env, epoch);
  distributeTreasury(state, epoch);
  if ((env.height + 1) % env.ledger.epochLength === 0) endEpoch(state, env, epoch);
}

function endEpoch(state: StateOverlay, env: OperationEnv, epoch: number): void {
  const next = epoch + 1;
  // Unbonding entries maturing at the start of the next epoch are paid out.
  for (const [delegator, validator] of queueTake(state, next)) {
    const shares = getUnbondingShares(state, delegator, validator, next);
    if (shares === 0n) continue;
    const pool = getPool(state, validator, next);
    const tokens = pool.shares === 0n ? 0n : (shares * pool.tokens) / pool.shares;
    pool.tokens -= tokens;
    pool.shares -= shares;
    putPool(state, validator, next, pool);
    putUnbondingShares(state, delegator, validator, next, 0n);
    credit(state, delegator, baseToWei(tokens));
    const totals = getTotals(state);
    totals.unbonding -= tokens;
    putTotals(state, totals);
  }
  // Checkpoints of each validator's reward ratio (exact per-epoch reward history), and the next active set.
  const candidates: ActiveMember[] = [];
  for (const address of registry(state)) {
    const v = getValidator(state, address);
    if (!v) continue;
    // Redelegations out of it created UNBONDING_EPOCHS - 1 epochs ago mature with the next epoch.
    if (next >= UNBONDING_EPOCHS) dropRedelegationEntries(state, address, next - UNBONDING_EPOCHS);
    putCheckpoint(state, address, epoch, { acc: v.acc, commission_total: v.commission_total });
    if (v.status !== 'bonded' || v.tokens === 0n) continue;
    const self = getDelegation(state, address, address);
    if (!self || sharesValue(v, self.shares) < MIN_SELF_STAKE_BASE) continue;
    candidates.push({ address, name: v.name, public_key: v.public_key, power: v.tokens });
  }
  candidates.sort((a, b) => (a.power !== b.power ? (a.power > b.power ? -1 : 1) : a.address < b.address ? -1 : 1));
  const members = candidates.slice(0, MAX_ACTIVE_VALIDATORS);
  // With no eligible validator the set in force continues (a chain never loses its last proposer).
  if (members.length > 0) putActiveSet(state, { epoch: next, members }, env.height);
  void env;
}
