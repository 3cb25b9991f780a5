/**
 * Epochs: fixed windows of `params.epochLength` heights starting at genesis (epoch n = heights
 * n*L .. n*L + L - 1); the length is a genesis parameter (default 3600: one hour of 1 s blocks,
 * docs/networks.md). The staking module (modules/staking) matures unbondings, checkpoints reward ratios and
 * chooses the next active set at each epoch's last block. The arithmetic lives in chain/schedule.ts; this
 * view stays in services, not the module: it reads heights, not staking records.
 */
import { type ChainParams, epochEnd, epochOf, epochStart } from '../chain/index.js';

export { epochEnd, epochOf, epochStart };

export interface EpochView {
  epoch_number: number;
  start_height: number;
  end_height: number;
  /** Share of the epoch's heights produced so far, 0..1 (1 = complete), 6 decimals. */
  progress: number;
}

/** The epoch holding height, with its progress when height is the head. */
export function epochView(params: ChainParams, height: number): EpochView {
  const epoch = epochOf(params, height);
  const start = epochStart(params, epoch);
  return {
    epoch_number: epoch,
    start_height: start,
    end_height: epochEnd(params, epoch),
    progress: Math.round(((height - start + 1) / params.epochLength) * 1e6) / 1e6,
  };
}
