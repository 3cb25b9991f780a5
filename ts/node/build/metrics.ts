/** The node's Prometheus metrics (one registry per node; GET /metrics reads it through `ctx.metrics`). */
import { Registry } from 'prom-client';
import type { PoaEngine } from '../../consensus/index.js';
import { type NodeMetrics, createMetrics, registerRpcMethods } from '../../metrics/index.js';
import { devRpcMethods, rpcMethods } from '../../rpc/index.js';
import type { NodeContext } from '../../services/index.js';
import type { NodeCore } from './stops.js';

/** Sets `ctx.metrics` and counts admission's refusals; `httpBackend` is read once the API listens. */
export function buildMetrics(ctx: NodeContext, core: NodeCore, consensus: PoaEngine, httpBackend: () => string): NodeMetrics {
  const { chain, mempool, admission } = core;
  const metrics = createMetrics(new Registry(), {
    height: () => chain.height,
    finalizedHeight: () => consensus.finalizedHeight(),
    activeValidators: () => chain.params.validators.length,
    txPoolSize: () => mempool.size,
    startedAt: ctx.startedAt,
    cryptoBackend: ctx.cryptoBackend,
    info: () => ({
      version: ctx.version,
      build: ctx.build,
      chainId: chain.params.chainId,
      network: chain.params.network,
      httpBackend: httpBackend(),
    }),
  });
  ctx.metrics = metrics;
  admission.onReject = (reason) => metrics.txRejectedBy(reason);
  // The served methods get their own label (a process-wide allowance that only grows: bounded, never a count).
  registerRpcMethods(Object.keys(ctx.dev ? { ...rpcMethods, ...devRpcMethods() } : rpcMethods));
  return metrics;
}
