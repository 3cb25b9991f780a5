/**
 * Epochs: fixed windows of EPOCH_LENGTH_BLOCKS heights starting at genesis (epoch n = heights
 * n*L .. n*L + L - 1). One hour of 1 s blocks. The staking module (DPoS) will settle rewards and
 * validator-set changes at epoch boundaries; until then epochs only group statistics.
 */
export const EPOCH_LENGTH_BLOCKS = 3600;

export const epochOf = (height: number): number => Math.floor(height / EPOCH_LENGTH_BLOCKS);
export const epochStart = (epoch: number): number => epoch * EPOCH_LENGTH_BLOCKS;
export const epochEnd = (epoch: number): number => epoch * EPOCH_LENGTH_BLOCKS + EPOCH_LENGTH_BLOCKS - 1;

export interface EpochView {
  epoch_number: number;
  start_height: number;
  end_height: number;
  /** Share of the epoch's heights produced so far, 0..1 (1 = complete), 6 decimals. */
  progress: number;
}

/** The epoch holding height, with its progress when height is the head. */
export function epochView(height: number): EpochView {
  const epoch = epochOf(height);
  const start = epochStart(epoch);
  return {
    epoch_number: epoch,
    start_height: start,
    end_height: epochEnd(epoch),
    progress: Math.round(((height - start + 1) / EPOCH_LENGTH_BLOCKS) * 1e6) / 1e6,
  };
}
