import { BASE_PER_COIN } from './units.js';

/**
 * Emission schedule (documented in docs/economics.md): 2 coins per block, halving every
 * 31,536,000 blocks (one year of 1 s blocks), never minting past the maximum supply in force
 * at that height (210M, 315M from the tokenomics-v2 fork). Genesis mints no reward.
 */
/**
 * The protocol treasury (docs/economics.md): from the reward-distribution-v2 height every block's coinbase
 * is credited here and the staking module distributes it stake-weighted at the end of the block. The
 * address is the ASCII bytes of "treasury" padded with zeros: no key derives to it, so nobody can spend
 * from it except the protocol.
 */
export const TREASURY_ADDRESS = '0x7472656173757279000000000000000000000000';

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
