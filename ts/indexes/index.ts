/**
 * The door of ts/indexes/: the node's on-disk read-model indexes over the chain, kept beside its tables and fed
 * by its commits: the state index (rich list, token holders, delegations: state-index*.ts) and the chain index
 * (per-validator production, epochs, daily activity, first activity: chain-index.ts). Queries of ts/services ask
 * them through the ChainReader they hold (indexed-chain.ts); ts/node opens, warms and stops them.
 * docs/architecture.md.
 */
export {
  INDEX_BACKFILL_BLOCKS,
  WARM_STEP_BLOCKS,
  DAY_SECONDS,
  STATS_DAYS,
  FIRST_ACTIVITY_LOOKUPS,
  type ProducerTally,
  type EpochAgg,
  type DayAgg,
  type IndexCoverage,
  ChainIndex,
  chainIndex,
  warmChainIndex,
} from './chain-index.js';
export { indexedChain } from './indexed-chain.js';
export {
  BUILD_WAIT_MS,
  StateIndexBuildingError,
  RankedBalances,
  type StateIndexOptions,
  StateIndex,
  openStateIndex,
  stateIndex,
  stopStateIndex,
} from './state-index.js';
export { nftIndexOf } from './nft-index.js';
