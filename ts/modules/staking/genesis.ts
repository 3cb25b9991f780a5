/** Genesis self-stakes, and whether a bonded active set is in force (the coinbase's route from reward distribution v2). */
import type { StateOverlay, StateReader } from '../../state/index.js';
import { getSupply, putSupply } from '../kit/supply.js';
import { baseToWei } from '../kit/units.js';
import { bond } from './core.js';
import { MIN_SELF_STAKE_BASE } from './params.js';
import { type ActiveMember, getActiveSet, putActiveSet, putRegistry, registry } from './state.js';

/** Whether the active set in force carries bonded stake (reward distribution v2 then routes the coinbase to the treasury). */
export function hasBondedActiveSet(state: StateReader): boolean {
  const set = getActiveSet(state);
  return set?.members.some((m) => m.power > 0n) ?? false;
}

export interface GenesisStake {
  address: string;
  name: string;
  public_key: string;
  stake: bigint;
}

/**
 * Genesis self-stakes (genesis `validators[].stake`, base units): minted at genesis and bonded as each
 * validator's self-delegation (commission 0); those at or above the minimum form the active set of
 * epoch 0, so a network can start in DPoS.
 */
export function applyGenesisStakes(state: StateOverlay, stakes: readonly GenesisStake[]): void {
  const staked = stakes.filter((s) => s.stake > 0n);
  if (staked.length === 0) return;
  let minted = 0n;
  const members: ActiveMember[] = [];
  for (const s of staked) {
    putRegistry(state, [...registry(state), s.address]);
    bond(
      state,
      s.address,
      {
        address: s.address,
        name: s.name,
        public_key: s.public_key,
        commission_bps: 0n,
        commission_epoch: -1,
        tokens: 0n,
        shares: 0n,
        status: 'bonded',
        jailed_until_epoch: 0,
        registered_height: 0,
        acc: 0n,
        commission_unclaimed: 0n,
        rewards_total: 0n,
        commission_total: 0n,
      },
      s.stake,
      0,
    );
    minted += baseToWei(s.stake);
    if (s.stake >= MIN_SELF_STAKE_BASE)
      members.push({ address: s.address, name: s.name, public_key: s.public_key, power: s.stake });
  }
  const supply = getSupply(state);
  putSupply(state, { minted: supply.minted + minted, burned: supply.burned });
  if (members.length) putActiveSet(state, { epoch: 0, members });
}
