/**
 * DPoS staking (docs/tokens-and-staking.md, docs/economics.md) as one native module holding what the
 * Cosmos SDK spreads over three: validators, delegations, unbonding, redelegation and the active set per
 * epoch (x/staking: core.ts, state.ts, redelegations.ts, end-block.ts), F1 rewards, commission and the
 * treasury's distribution (x/distribution: distribution.ts, reward-history.ts), downtime and double-sign
 * slashing, jailing and unjailing (x/slashing: slashing.ts), plus the PoA authority additions of the
 * genesis admin. Why one module and not three: docs/tokens-and-staking.md "One module".
 */
import type { NativeEvent } from '../kit/events.js';
import { defineModule } from '../kit/module.js';
import { stakingEndBlock } from './end-block.js';
import { STAKING_EVENTS } from './events.js';
import { STAKING_HANDLERS } from './handlers.js';
import { STAKING_INVARIANTS } from './invariants.js';
import { STAKING_NS } from './keys.js';
import { STAKING_OPERATIONS } from './operations.js';
import { stakingDoubleSign } from './slashing.js';

/**
 * Index terms: `stake:<address>` for every party of a staking event (a delegator's or validator's
 * history); reward payments (RewardsClaimed, RewardsSettled) also under `rewards:<delegator>`, the
 * delegator's reward history (queries of services/staking-rewards.ts). A settlement that only accompanies a
 * delegation change is listed there alone.
 */
function indexTerms(e: NativeEvent): string[] {
  const f = e.fields;
  if (e.type === STAKING_EVENTS.RewardsSettled) return [`rewards:${f.delegator}`];
  if (e.type === STAKING_EVENTS.RewardsClaimed) return [`stake:${f.delegator}`, `stake:${f.validator}`, `rewards:${f.delegator}`];
  const parties = [f.delegator, f.validator, f.from_validator, f.to_validator, f.address].filter((x): x is string => !!x);
  return [...new Set(parties)].map((a) => `stake:${a}`);
}

export const stakingModule = defineModule({
  name: 'staking',
  operations: STAKING_OPERATIONS,
  handlers: STAKING_HANDLERS,
  namespaces: Object.values(STAKING_NS),
  events: STAKING_EVENTS,
  indexTerms,
  endBlock: stakingEndBlock,
  onDoubleSign: stakingDoubleSign,
  invariants: STAKING_INVARIANTS,
});

export * from './params.js';
export * from './state.js';
export * from './errors.js';
export { STAKING_NS, delegationKey, unbondingKey } from './keys.js';
export { STAKING_EVENTS } from './events.js';
export { STAKING_OPERATIONS, type StakingOperationName, type StakingMessage } from './operations.js';
export { STAKING_INVARIANTS } from './invariants.js';
export { pendingReward, sharesValue } from './core.js';
export * from './reward-history.js';
export { type RedelegationEntry, redelegationEntries } from './redelegations.js';
export { type GenesisStake, applyGenesisStakes, hasBondedActiveSet } from './genesis.js';
export * from './queries.js';
