/**
 * Prometheus metrics of the node (GET /metrics). One registry per node (tests run several nodes in one
 * process), plus prom-client's process metrics registered once per process.
 */
import { Registry } from 'prom-client';
import { type MetricsSources, NodeMetrics } from './node-metrics.js';

export { type MetricsSources, NodeMetrics } from './node-metrics.js';
export { processRegistry } from './process.js';
export { MAX_RPC_METHOD_LABELS, OTHER_RPC_METHOD, registerRpcMethods, rpcMethodLabel } from './rpc-methods.js';

/** Content type of the text exposition format served at /metrics. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Nodes whose metrics are live in this process (one in production). */
const live = new Set<NodeMetrics>();

/** Creates a node's metrics in `registry` and makes it a target of recordRpcCall until closeMetrics. */
export function createMetrics(registry: Registry, sources: MetricsSources): NodeMetrics {
  const m = new NodeMetrics(registry, sources);
  live.add(m);
  return m;
}

/** Stops module-level recorders (recordRpcCall) from reaching this node's metrics. */
export function closeMetrics(m: NodeMetrics): void {
  live.delete(m);
}

/**
 * Records one executed JSON-RPC call for the dispatcher, which has no handle on a node's metrics. It reaches
 * every live node of the process: exact in production (one node per process); tests running several nodes in
 * one process share the counts. Method names outside the known set are labelled `other`.
 */
export function recordRpcCall(method: string, ok: boolean, seconds: number): void {
  for (const m of live) m.recordRpcCall(method, ok, seconds);
}
export { NetworkMetrics, type NetworkMetricsSources } from './network-metrics.js';
export { ApiKeyMetrics } from './api-key-metrics.js';
