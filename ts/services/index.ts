export * from './context.js';
export * from './chain-queries.js';
export * from './block-resolver.js';
export * from './get-balance.js';
export * from './account-queries.js';
export * from './tx-queries.js';
export * from './proof-queries.js';
export * from './eth-shapes.js';
export * from './audit-log.js';
export * from './not-active.js';
export * from './epochs.js';
export * from './chain-index.js';
export * from './chain-info.js';
export * from './history-queries.js';
export * from './address-queries.js';
export * from './token-queries.js';
export * from './validator-queries.js';
export * from './staking-queries.js';
export * from './staking-rewards.js';
export * from './stats-queries.js';
export * from './evm-queries.js';
export * from './simulate-queries.js';
export * from './log-queries.js';
export * from './evm-tokens.js';
export * from './trace-queries.js';
export * from './chain-events.js';
export * from './consensus-queries.js';
export * from './nft-queries.js';
export { nftIndexOf } from './nft-index.js';
export * from './event-replay.js';
export * from './state-at.js';
export { HistoryUnavailableError, StaleStateViewError } from '../chain/index.js';
export { NoSuchHeightError } from '../chain/index.js';
export {
  openStateIndex,
  RankedBalances,
  StateIndex,
  StateIndexBuildingError,
  stateIndex,
  stopStateIndex,
} from './state-index.js';
export * from './filters.js';
export * from './txpool-queries.js';
export * from './verified-contracts.js';
export * from './explorer-queries.js';
export * from './abi-decode.js';
export * from './readiness.js';
export * from './at-height-queries.js';
