/** The worker pools of eth_call/estimateGas and of traces; their threads start on first use. */
import type { Logger } from 'pino';
import { CallPool, TracePool } from '../../execution/index.js';
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
  return {
    evmCalls,
    evmTraces,
    stop: async () => {
      await evmCalls.close();
      await evmTraces.close();
    },
  };
}
