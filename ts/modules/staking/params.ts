/**
 * DPoS parameters (docs/economics.md, docs/tokens-and-staking.md). Cosmos SDK x/staking, x/distribution
 * and x/slashing are the models; the numbers are ours where the spec is silent.
 */
import { BASE_PER_COIN } from '../kit/units.js';

/** Spec: minimum self-stake 15,000 coins (base units). */
export const MIN_SELF_STAKE_BASE = 15_000n * BASE_PER_COIN;
/** Spec: BFT quorum floor; with fewer active validators blocks are DPoS without BFT rounds (chain/schedule.ts). */
export const MIN_BFT_VALIDATORS = 4;
/** Spec: the active set is the top 100 validators by stake. */
export const MAX_ACTIVE_VALIDATORS = 100;
export const MAX_COMMISSION_BPS = 10_000n;
/** Commission may change at most once per epoch, by at most this many basis points. */
export const MAX_COMMISSION_CHANGE_BPS = 100n;
/**
 * Undelegated coins are released this many epochs after the epoch of the Undelegate (24 epochs = one day
 * with the default 3600-block epoch); they stay slashable until then. Redelegations mature after the same
 * period (one in flight per delegator and validator pair).
 */
export const UNBONDING_EPOCHS = 24;
/** Sliding window of a validator's signing records (x/slashing SignedBlocksWindow). */
export const SIGNED_BLOCKS_WINDOW = 100;
/** A validator that signed fewer than half its window's records is jailed (x/slashing MinSignedPerWindow 0.5). */
export const MIN_SIGNED_PER_WINDOW_BPS = 5_000n;
/** Downtime slash: 0.01 % of the stake (x/slashing SlashFractionDowntime). */
export const DOWNTIME_SLASH_BPS = 1n;
/** A validator jailed for downtime may Unjail this many epochs later. */
export const DOWNTIME_JAIL_EPOCHS = 1;
/** Double-sign slash: 5 % of the stake and of the unbonding entries begun at or after the infraction's epoch. */
export const DOUBLE_SIGN_SLASH_BPS = 500n;
/** Fixed-point scale of the cumulative reward per share (F1). */
export const RATIO_SCALE = 10n ** 27n;
