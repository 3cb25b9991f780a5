/** Where a block stands for staking: its epoch, and whether DPoS staking runs yet. */
import type { OperationEnv } from '../kit/context.js';

/** The epoch of `height` (default: the block's own). Epochs are windows of `epochLength` heights from genesis. */
export const epochOf = (env: OperationEnv, height = env.height): number => Math.floor(height / env.ledger.epochLength);

/** Staking runs (operations, records, distribution) from the DPoS activation height. */
export const stakingActiveAt = (env: OperationEnv): boolean => env.height >= env.ledger.activation.dposBft;
