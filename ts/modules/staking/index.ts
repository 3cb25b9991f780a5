/**
 * DPoS staking (docs/tokens-and-staking.md, docs/economics.md): validators, delegations, unbonding and
 * redelegation (Cosmos x/staking), F1 rewards (x/distribution), downtime and double-sign slashing
 * (x/slashing), the active set per epoch and the PoA authority additions of the genesis admin.
 */
import type { OperationName } from '../operations.js';
import { StateOverlay, type StateReader } from '../../state/index.js';
import { getSupply, putSupply } from '../supply.js';
import { baseToWei } from '../units.js';
import type { NativeEvent } from '../events.js';
import { OperationFailed, type OperationModule } from '../operation-context.js';
import { bond } from './core.js';
import { stakingDoubleSign, stakingEndBlock } from './end-block.js';
import { STAKING_HANDLERS } from './operations.js';
import { MIN_SELF_STAKE_BASE } from './params.js';
import { type ActiveMember, getActiveSet, putActiveSet, putRegistry, registry } from './state.js';

export * from './params.js';
export * from './state.js';
export { pendingReward, sharesValue } from './core.js';
export * from './reward-history.js';
export { type RedelegationEntry, redelegationEntries } from './redelegations.js';

/**
 * Index terms: `stake:<address>` for every party of a staking event (a delegator's or validator's
 * history); reward payments (RewardsClaimed, RewardsSettled) also under `rewards:<delegator>`, the
 * delegator's reward history (services/staking-rewards.ts). A settlement that only accompanies a
 * delegation change is listed there alone.
 */
function indexTerms(e: NativeEvent): string[] {
  const f = e.fields;
  if (e.type === 'RewardsSettled') return [`rewards:${f.delegator}`];
  if (e.type === 'RewardsClaimed') return [`stake:${f.delegator}`, `stake:${f.validator}`, `rewards:${f.delegator}`];
  const parties = [f.delegator, f.validator, f.from_validator, f.to_validator, f.address].filter((x): x is string => !!x);
  return [...new Set(parties)].map((a) => `stake:${a}`);
}

export const stakingModule: OperationModule = {
  family: 'staking',
  apply: (call) => {
    const handler = STAKING_HANDLERS[call.op.name as OperationName];
    if (!handler) throw new OperationFailed(`${call.op.name} is not a staking operation`);
    handler(call);
  },
  indexTerms,
  endBlock: stakingEndBlock,
  onDoubleSign: stakingDoubleSign,
};

/** Whether the active set in force carries bonded stake (reward distribution v2 then routes the coinbase to the treasury). */
export function hasBondedActiveSet(state: StateReader): boolean {
  const set = getActiveSet(state);
  return set !== null && set.members.some((m) => m.power > 0n);
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

export { StateOverlay };
