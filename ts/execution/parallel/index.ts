/** Parallel execution of a block's EVM transactions (docs/evm.md "Parallel execution"): the switch and its counters. */
export {
  DEFAULT_PARALLEL_MAIN_SHARE,
  DEFAULT_PARALLEL_MIN_TXS,
  type ParallelOptions,
  closeParallelExecution,
  configureParallelExecution,
  defaultNodeParallelWorkers,
  defaultParallelWorkers,
  parallelOptions,
  readyWorkers,
} from './pool.js';
export { type ParallelStats, type ParallelTotals, lastParallelStats, parallelTotals } from './session.js';
