/**
 * Consensus inputs derived from chain parameters (and, once staking runs, from state) alone, so every
 * node computes the same proposer and phase for a height: block production, block validation and the
 * query layer all read them here.
 */
import type { StateReader } from '../state/index.js';
import type { ConsensusPhase } from './block.js';
import { MIN_BFT_VALIDATORS, activeSetInForceAt, getPoaSet } from '../ledger/index.js';
import type { ChainParams, GenesisValidator } from './params.js';

/** A validator of a height's active set with its voting power (BFT quorums are 3/4 of the total power). */
export interface ActiveValidator extends GenesisValidator {
  /** Voting power: the DPoS stake in base units once staking runs; 1 each under PoA (an equal split). */
  power: bigint;
}

/** BFT quorum floor (spec: MIN_BFT_VALIDATORS; defined with the staking parameters, which guard it too). */
export { MIN_BFT_VALIDATORS };

/**
 * BFT finality (Tendermint rounds, commit certificates in `justification`) runs from the DPoS
 * activation height whenever the active set has at least MIN_BFT_VALIDATORS; with fewer, blocks are
 * `DPoS` (stake-ordered rotation, final on commit), never `DPoS+BFT` without a justification.
 */
export const BFT_FINALITY = true;

/**
 * Validators that may propose and vote at a height, sorted by address (spec: "validators sorted by
 * address"), with their voting power. `state` is the state the height builds on, or the state after it
 * (checking its certificate, in the next block's last_commit): a set changed during a height takes
 * effect at the next one (activeSetInForceAt). Before the DPoS activation
 * height: the PoA authorities (genesis, plus those the genesis admin added) with equal power 1; from it the
 * active set the staking module chose at the last epoch boundary (power = bonded stake, base units), or the
 * genesis authorities while no validator has stake.
 */
export function validatorSetAt(params: ChainParams, state: StateReader, height: number): readonly ActiveValidator[] {
  if (height < params.activation.dposBft) return getPoaSet(state) ?? sortedValidators(params);
  return activeSetInForceAt(state, height)?.members ?? sortedValidators(params);
}

/** Total voting power of a set. */
export const totalPower = (set: readonly ActiveValidator[]): bigint => set.reduce((s, v) => s + v.power, 0n);

const sortedCache = new WeakMap<ChainParams, ActiveValidator[]>();
function sortedValidators(params: ChainParams): ActiveValidator[] {
  let s = sortedCache.get(params);
  if (!s) {
    s = [...params.validators]
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
      .map((v) => ({ address: v.address, public_key: v.public_key, name: v.name, power: 1n }));
    sortedCache.set(params, s);
  }
  return s;
}

/**
 * The scheduled proposer of a height: height modulo the validator count over the sorted set (spec).
 * Under BFT a round whose proposer did not deliver moves to the next validator: (height + round) mod n.
 */
export function proposerAt(params: ChainParams, state: StateReader, height: number, round = 0): ActiveValidator | null {
  const set = validatorSetAt(params, state, height);
  return set.length ? set[(height + round) % set.length] : null;
}

/** The consensus phase a block at this height must carry. */
export function consensusPhaseAt(params: ChainParams, state: StateReader, height: number): ConsensusPhase {
  if (height === 0 || height < params.activation.dposBft) return 'PoA';
  return phaseOfSet(params, height, validatorSetAt(params, state, height));
}

/** consensusPhaseAt for a caller that already holds the height's validator set (validatorSetAt). */
export function phaseOfSet(params: ChainParams, height: number, set: readonly ActiveValidator[]): ConsensusPhase {
  if (height === 0 || height < params.activation.dposBft) return 'PoA';
  return BFT_FINALITY && set.length >= MIN_BFT_VALIDATORS ? 'DPoS+BFT' : 'DPoS';
}

export const epochOf = (params: ChainParams, height: number): number => Math.floor(height / params.epochLength);
export const epochStart = (params: ChainParams, epoch: number): number => epoch * params.epochLength;
export const epochEnd = (params: ChainParams, epoch: number): number => epoch * params.epochLength + params.epochLength - 1;
