import { BASE_PER_COIN } from './units.js';

/**
 * Emission schedule (documented in docs/economics.md): 2 coins per block, halving every
 * 31,536,000 blocks (one year of 1 s blocks), never minting past the maximum supply in force
 * at that height (210M, 315M from the tokenomics-v2 fork). Genesis mints no reward.
 */
export const INITIAL_BLOCK_REWARD_BASE = 2n * BASE_PER_COIN;
export const HALVING_INTERVAL = 31_536_000;

export function scheduledReward(height: number): bigint {
  if (height <= 0) return 0n;
  const halvings = Math.floor((height - 1) / HALVING_INTERVAL);
  return halvings >= 64 ? 0n : INITIAL_BLOCK_REWARD_BASE >> BigInt(halvings);
}

/** Reward in base units for the block at height, given what has been minted so far (base units). */
export function blockReward(height: number, mintedBase: bigint, maxSupplyBase: bigint): bigint {
  const room = maxSupplyBase - mintedBase;
  if (room <= 0n) return 0n;
  const r = scheduledReward(height);
  // biome-ignore lint/complexity/useMathMinMax: bigint, Math.min does not apply
  return r < room ? r : room;
}
