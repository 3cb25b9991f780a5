import { collectDefaultMetrics, Registry } from 'prom-client';

let shared: Registry | undefined;

/**
 * prom-client's default metrics (CPU, memory, event loop lag, GC, handles) describe the process, not a node,
 * and each collection installs process-wide observers that are never removed. They are therefore registered
 * once per process in their own registry, which every node's /metrics appends to its own.
 */
export function processRegistry(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}
