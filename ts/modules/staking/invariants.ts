/**
 * Properties of the staking state that hold after every block (Cosmos keeper/invariants.go), checked by
 * the module tests after each block and by /chain/validate. Each is one pass over the module's records.
 */
import type { KeyStr } from '../../state/index.js';
import type { Invariant, StateScan } from '../kit/module.js';
import { pendingReward } from './core.js';
import { STAKING_NS } from './keys.js';
import { SIGNED_BLOCKS_WINDOW } from './params.js';
import {
  type DelegationRecord,
  type ValidatorRecord,
  getActiveSet,
  getDelegation,
  getSigningInfo,
  getTotals,
  getValidator,
  parseDelegationKey,
} from './state.js';

const addressOf = (k: KeyStr, from: number): string => `0x${Buffer.from(k, 'latin1').toString('hex', from, from + 20)}`;

/** Every validator record and every delegation (with its validator's address), read in one pass. */
function records(state: StateScan): {
  validators: Map<string, ValidatorRecord>;
  delegations: [string, string, DelegationRecord][];
  poolTokens: bigint;
} {
  const validators = new Map<string, ValidatorRecord>();
  const delegations: [string, string, DelegationRecord][] = [];
  let poolTokens = 0n;
  for (const [k, raw] of state.entries()) {
    const ns = k.charCodeAt(0);
    if (ns === STAKING_NS.validator && k.length === 21) {
      const v = getValidator(state, addressOf(k, 1));
      if (v) validators.set(v.address, v);
    } else if (ns === STAKING_NS.delegation) {
      const dv = parseDelegationKey(k);
      const d = dv && getDelegation(state, dv[0], dv[1]);
      if (dv && d) delegations.push([dv[0], dv[1], d]);
    } else if (ns === STAKING_NS.unbondingPool) {
      poolTokens += BigInt(JSON.parse(raw.toString('utf8')).tokens as string);
    }
  }
  return { validators, delegations, poolTokens };
}

/**
 * staking: the bonded pool (totals.bonded) is Σ validator tokens, i.e. the self-stakes and delegations as
 * valued now (after slashes); every validator's shares are exactly its delegations' shares (self-delegation
 * included); the unbonding total is Σ unbonding pool tokens; nothing is negative.
 */
export const bondedPoolInvariant: Invariant = {
  name: 'staking/bonded-pool-equals-delegations',
  check(state) {
    const bad: string[] = [];
    const { validators, delegations, poolTokens } = records(state);
    const totals = getTotals(state);
    let tokens = 0n;
    for (const v of validators.values()) {
      if (v.tokens < 0n || v.shares < 0n) bad.push(`validator ${v.address} has tokens ${v.tokens}, shares ${v.shares}`);
      if (v.shares === 0n && v.tokens !== 0n) bad.push(`validator ${v.address} has ${v.tokens} tokens and no shares`);
      tokens += v.tokens;
    }
    if (totals.bonded !== tokens) bad.push(`bonded pool ${totals.bonded} != Σ validator tokens ${tokens}`);
    const shares = new Map<string, bigint>();
    for (const [delegator, validator, d] of delegations) {
      if (!validators.has(validator)) bad.push(`delegation of ${delegator} to unknown validator ${validator}`);
      if (d.shares <= 0n) bad.push(`delegation of ${delegator} to ${validator} holds ${d.shares} shares`);
      shares.set(validator, (shares.get(validator) ?? 0n) + d.shares);
    }
    for (const v of validators.values()) {
      const held = shares.get(v.address) ?? 0n;
      if (held !== v.shares) bad.push(`validator ${v.address} issued ${v.shares} shares, its delegations hold ${held}`);
    }
    if (totals.unbonding !== poolTokens) bad.push(`unbonding total ${totals.unbonding} != Σ unbonding pools ${poolTokens}`);
    return bad;
  },
};

/**
 * distribution: outstanding rewards are never negative, and what the pool holds covers them exactly up to
 * rounding dust: Σ pending delegation rewards + Σ unclaimed commission ≤ rewards_pool (F1 rounds every
 * ratio and payment down, so the dust left in the pool is ≥ 0 and never owed to anyone).
 */
export const outstandingRewardsInvariant: Invariant = {
  name: 'distribution/outstanding-rewards-within-pool',
  check(state) {
    const bad: string[] = [];
    const { validators, delegations } = records(state);
    const pool = getTotals(state).rewards_pool;
    if (pool < 0n) bad.push(`rewards pool ${pool} < 0`);
    let outstanding = 0n;
    for (const v of validators.values()) {
      if (v.commission_unclaimed < 0n) bad.push(`validator ${v.address} has unclaimed commission ${v.commission_unclaimed}`);
      outstanding += v.commission_unclaimed;
    }
    for (const [delegator, validator, d] of delegations) {
      const v = validators.get(validator);
      if (!v) continue;
      if (d.start_acc > v.acc) bad.push(`delegation of ${delegator} to ${validator} starts after its validator's ratio`);
      outstanding += pendingReward(v, d);
    }
    if (outstanding > pool) bad.push(`outstanding rewards ${outstanding} exceed the rewards pool ${pool}`);
    return bad;
  },
};

/**
 * slashing: a jailed or tombstoned validator is in the active set only as its last member (a chain never
 * loses its last proposer); signing windows count at most SIGNED_BLOCKS_WINDOW records, misses included.
 */
export const jailedOutOfActiveSetInvariant: Invariant = {
  name: 'slashing/jailed-not-active',
  check(state) {
    const bad: string[] = [];
    const set = getActiveSet(state);
    for (const m of set?.members ?? []) {
      const v = getValidator(state, m.address);
      if (v && v.status !== 'bonded' && set && set.members.length > 1)
        bad.push(`${v.status} validator ${v.address} is in the active set of epoch ${set.epoch}`);
    }
    for (const [k] of state.entries()) {
      if (k.charCodeAt(0) !== STAKING_NS.signing) continue;
      const info = getSigningInfo(state, addressOf(k, 1));
      if (info.count > SIGNED_BLOCKS_WINDOW || info.missed > info.count || info.missed < 0)
        bad.push(`signing window of ${addressOf(k, 1)}: ${info.missed} missed of ${info.count}`);
    }
    return bad;
  },
};

export const STAKING_INVARIANTS: readonly Invariant[] = [
  bondedPoolInvariant,
  outstandingRewardsInvariant,
  jailedOutOfActiveSetInvariant,
];
