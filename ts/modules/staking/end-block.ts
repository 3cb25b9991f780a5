/**
 * The staking module's end-of-block work: signing records and downtime jailing (x/slashing), the
 * stake-weighted distribution of the treasury (x/distribution, F1), and at the last block of an epoch the
 * maturing of unbonding entries, the epoch's reward-ratio checkpoints and the next epoch's active set.
 */
import { getAccount, putAccount, type StateOverlay } from '../../state/index.js';
import type { OperationEnv } from '../operation-context.js';
import { TREASURY_ADDRESS } from '../rewards.js';
import { WEI_PER_BASE, baseToWei } from '../units.js';
import { credit, removeFromActiveSet, sharesValue, slash } from './core.js';
import {
  DOUBLE_SIGN_SLASH_BPS,
  DOWNTIME_JAIL_EPOCHS,
  DOWNTIME_SLASH_BPS,
  MAX_ACTIVE_VALIDATORS,
  MIN_BFT_VALIDATORS,
  MIN_SELF_STAKE_BASE,
  MIN_SIGNED_PER_WINDOW_BPS,
  RATIO_SCALE,
  SIGNED_BLOCKS_WINDOW,
  UNBONDING_EPOCHS,
} from './params.js';
import { dropRedelegationEntries } from './redelegations.js';
import {
  type ActiveMember,
  activeSetInForceAt,
  getActiveSet,
  getDelegation,
  getEpochStats,
  getPool,
  getSigningInfo,
  getTotals,
  getUnbondingShares,
  getValidator,
  putActiveSet,
  putEpochStats,
  putPool,
  putCheckpoint,
  putSigningInfo,
  putTotals,
  putUnbondingShares,
  putValidator,
  queueTake,
  registry,
} from './state.js';

const epochOf = (env: OperationEnv, height = env.height): number => Math.floor(height / env.ledger.epochLength);

/** Staking runs (operations, records, distribution) from the DPoS activation height. */
export const stakingActiveAt = (env: OperationEnv): boolean => env.height >= env.ledger.activation.dposBft;

export function stakingEndBlock(state: StateOverlay, env: OperationEnv): void {
  // Nothing to do (and nothing written) on a chain where no validator ever bonded stake.
  if (!stakingActiveAt(env) || registry(state).length === 0) return;
  const epoch = epochOf(env);
  recordSignatures(state, env, epoch);
  distributeTreasury(state, epoch);
  if ((env.height + 1) % env.ledger.epochLength === 0) endEpoch(state, env, epoch);
}

/**
 * Who signed: the proposer signs its own block (PoA, DPoS); under DPoS+BFT the block's last commit names
 * the precommits for its parent, and every member of the active set absent from it missed.
 */
function recordSignatures(state: StateOverlay, env: OperationEnv, epoch: number): void {
  const stats = getEpochStats(state, epoch, env.proposer);
  stats.blocks++;
  putEpochStats(state, epoch, env.proposer, stats);
  // The last commit certifies the parent: its signers are members of the set in force there (this very
  // block may already have changed the set, by evidence or an operation).
  const set = activeSetInForceAt(state, env.height - 1);
  if (!set) return;
  if (!env.lastCommit) {
    if (set.members.some((m) => m.address === env.proposer)) sign(state, env, epoch, env.proposer, true);
    return;
  }
  const signers = new Set(env.lastCommit);
  for (const m of set.members) sign(state, env, epoch, m.address, signers.has(m.address));
}

function sign(state: StateOverlay, env: OperationEnv, epoch: number, validator: string, signed: boolean): void {
  const info = getSigningInfo(state, validator);
  const bits = Buffer.alloc(Math.ceil(SIGNED_BLOCKS_WINDOW / 8));
  if (info.bits) Buffer.from(info.bits, 'hex').copy(bits);
  const byte = info.index >> 3;
  const mask = 1 << (info.index & 7);
  const wasMissed = info.count >= SIGNED_BLOCKS_WINDOW && (bits[byte] & mask) !== 0;
  if (wasMissed) info.missed--;
  if (signed) bits[byte] &= ~mask;
  else {
    bits[byte] |= mask;
    info.missed++;
  }
  info.index = (info.index + 1) % SIGNED_BLOCKS_WINDOW;
  info.count = Math.min(SIGNED_BLOCKS_WINDOW, info.count + 1);
  info.bits = bits.toString('hex');
  if (signed) info.signed_total++;
  else info.missed_total++;
  const stats = getEpochStats(state, epoch, validator);
  if (signed) stats.signed++;
  else stats.missed++;
  putEpochStats(state, epoch, validator, stats);
  const maxMissed = SIGNED_BLOCKS_WINDOW - Number((BigInt(SIGNED_BLOCKS_WINDOW) * MIN_SIGNED_PER_WINDOW_BPS) / 10_000n);
  if (info.count >= SIGNED_BLOCKS_WINDOW && info.missed > maxMissed && !jailingEndsBft(state)) {
    const v = getValidator(state, validator);
    if (v && v.status === 'bonded' && removeFromActiveSet(state, validator, env.height)) {
      v.status = 'jailed';
      v.jailed_until_epoch = epoch + DOWNTIME_JAIL_EPOCHS;
      const now = { height: env.height, epoch };
      slash(state, v, DOWNTIME_SLASH_BPS, now, now);
      // x/slashing: a jailed validator's window starts afresh.
      putSigningInfo(state, validator, { ...info, count: 0, index: 0, bits: '', missed: 0 });
      return;
    }
  }
  putSigningInfo(state, validator, info);
}

/**
 * Downtime jailing never takes an active set of MIN_BFT_VALIDATORS below that floor: the chain would
 * leave DPoS+BFT for DPoS without rounds, where one proposer's block is final and a network partition
 * forks the chain. A chain that records missed signatures is making BFT blocks without the absent
 * validator, so keeping it in the set costs no liveness (its misses stay recorded, its uptime falls).
 * Double-sign tombstoning is not held back: a validator that equivocated must leave the set.
 */
function jailingEndsBft(state: StateOverlay): boolean {
  return getActiveSet(state)?.members.length === MIN_BFT_VALIDATORS;
}

/**
 * Distribute the treasury's balance over the active set by stake (whole base units per validator; the
 * rest stays in the treasury for the next block): commission first, the remainder to the delegators
 * through the validator's cumulative reward per share. O(1) per validator, nothing per delegator.
 */
function distributeTreasury(state: StateOverlay, epoch: number): void {
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

/** Verified double-sign evidence: slash the stake (and unbonding entries begun since the infraction), tombstone. */
export function stakingDoubleSign(state: StateOverlay, validator: string, infractionHeight: number, env: OperationEnv): void {
  if (!stakingActiveAt(env)) return;
  const v = getValidator(state, validator);
  if (!v || v.status === 'tombstoned') return;
  slash(
    state,
    v,
    DOUBLE_SIGN_SLASH_BPS,
    { height: infractionHeight, epoch: epochOf(env, infractionHeight) },
    { height: env.height, epoch: epochOf(env) },
  );
  v.status = 'tombstoned';
  putValidator(state, v);
  removeFromActiveSet(state, validator, env.height);
}

/** Base units of a wei amount rounded down (used by queries of the treasury). */
export const weiToBaseFloor = (wei: bigint): bigint => wei / WEI_PER_BASE;
