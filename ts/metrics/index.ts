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

/**
 * Creates a node's metrics in `registry`. The node hands `recordRpcCall` of these metrics to its own JSON-RPC
 * dispatchers (ts/node), so nodes sharing a process never count each other's calls.
 */
export function createMetrics(registry: Registry, sources: MetricsSources): NodeMetrics {
  return new NodeMetrics(registry, sources);
}

export { NetworkMetrics, type NetworkMetricsSources } from './network-metrics.js';
export { ApiKeyMetrics } from './api-key-metrics.js';
