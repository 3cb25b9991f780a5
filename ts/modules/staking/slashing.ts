/**
 * Slashing (Cosmos x/slashing): every block's signing records over a sliding window, downtime jailing with
 * a small slash, and double-sign slashing with tombstoning. The slash itself (bonded tokens, unbonding
 * pools, redelegations) is core.ts `slash`; Unjail is a handler (handlers.ts).
 */
import type { StateOverlay } from '../../state/index.js';
import type { OperationEnv } from '../kit/context.js';
import { removeFromActiveSet, slash } from './core.js';
import {
  DOUBLE_SIGN_SLASH_BPS,
  DOWNTIME_JAIL_EPOCHS,
  DOWNTIME_SLASH_BPS,
  MIN_BFT_VALIDATORS,
  MIN_SIGNED_PER_WINDOW_BPS,
  SIGNED_BLOCKS_WINDOW,
} from './params.js';
import { epochOf, stakingActiveAt } from './schedule.js';
import {
  activeSetInForceAt,
  getActiveSet,
  getEpochStats,
  getSigningInfo,
  getValidator,
  putEpochStats,
  putSigningInfo,
  putValidator,
} from './state.js';

/**
 * Who signed: the proposer signs its own block (PoA, DPoS); under DPoS+BFT the block's last commit names
 * the precommits for its parent, and every member of the active set absent from it missed.
 */
export function recordSignatures(state: StateOverlay, env: OperationEnv, epoch: number): void {
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
