/**
 * The worker pools of eth_call/estimateGas and of traces (their threads start on first use), and parallel block
 * execution's workers unless `--parallel-evm-workers 0` (started with the first block that wants them).
 */
import type { Logger } from 'pino';
import { CallPool, TracePool, closeParallelExecution, configureParallelExecution } from '../../execution/index.js';
import type { NodeConfig } from '../config.js';
import type { Built } from './stops.js';

export function buildWorkerPools(config: NodeConfig, log: Logger): Built<{ evmCalls: CallPool; evmTraces: TracePool }> {
  const evmCalls = new CallPool({
    workers: config.rpcEvmWorkers,
    maxQueue: config.rpcEvmQueue,
    inlineMs: config.rpcEvmInlineMs,
    gasCap: config.rpcGasCap,
    timeoutMs: config.rpcEvmTimeoutMs,
    onError: (err) => log.error({ err }, 'call worker failed'),
  });
  const evmTraces = new TracePool({ onError: (err) => log.error({ err }, 'trace worker failed') });
  if (config.parallelEvmWorkers > 0) {
    configureParallelExecution({ workers: config.parallelEvmWorkers, lazy: true }).catch((err) =>
      log.error({ err }, 'parallel execution workers failed to start'),
    );
  }
  return {
    evmCalls,
    evmTraces,
    stop: async () => {
      await evmCalls.close();
      await evmTraces.close();
      if (config.parallelEvmWorkers > 0) await closeParallelExecution();
    },
  };
}
