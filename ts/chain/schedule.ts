/**
 * Consensus inputs derived from chain parameters (and, once staking runs, from state) alone, so every
 * node computes the same proposer and phase for a height: block production, block validation and the
 * query layer all read them here.
 */
import type { ConsensusPhase } from './block.js';
import type { ChainParams, GenesisValidator } from './params.js';

/** BFT quorum floor (spec: MIN_BFT_VALIDATORS). */
export const MIN_BFT_VALIDATORS = 4;

/**
 * BFT finality (Tendermint rounds, commit certificates in `justification`) runs from the DPoS
 * activation height whenever the active set has at least MIN_BFT_VALIDATORS; with fewer, blocks are
 * `DPoS` (stake-ordered rotation, final on commit), never `DPoS+BFT` without a justification.
 */
export const BFT_FINALITY = true;

/** Validators that may propose at a height, sorted by address (spec: "validators sorted by address"). */
export function validatorSetAt(params: ChainParams, _height: number): readonly GenesisValidator[] {
  return sortedValidators(params);
}

const sortedCache = new WeakMap<ChainParams, GenesisValidator[]>();
function sortedValidators(params: ChainParams): GenesisValidator[] {
  let s = sortedCache.get(params);
  if (!s) {
    s = [...params.validators].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    sortedCache.set(params, s);
  }
  return s;
}

/**
 * The scheduled proposer of a height: height modulo the validator count over the sorted set (spec).
 * Under BFT a round whose proposer did not deliver moves to the next validator: (height + round) mod n.
 */
export function proposerAt(params: ChainParams, height: number, round = 0): GenesisValidator | null {
  const set = validatorSetAt(params, height);
  return set.length ? set[(height + round) % set.length] : null;
}

/** The consensus phase a block at this height must carry. */
export function consensusPhaseAt(params: ChainParams, height: number): ConsensusPhase {
  if (height === 0 || height < params.activation.dposBft) return 'PoA';
  return BFT_FINALITY && validatorSetAt(params, height).length >= MIN_BFT_VALIDATORS ? 'DPoS+BFT' : 'DPoS';
}

export const epochOf = (params: ChainParams, height: number): number => Math.floor(height / params.epochLength);
export const epochStart = (params: ChainParams, epoch: number): number => epoch * params.epochLength;
export const epochEnd = (params: ChainParams, epoch: number): number => epoch * params.epochLength + params.epochLength - 1;
