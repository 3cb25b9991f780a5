import { Counter, Gauge, collectDefaultMetrics, Registry } from 'prom-client';
import { parallelTotals, readyWorkers } from '../execution/index.js';

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
    registerParallelExecution(shared);
  }
  return shared;
}

/**
 * A counter that follows process-wide running totals, read at each scrape: one series per key of what `read`
 * returns (the label's values), or a single series without a label.
 */
function totalCounter(
  registry: Registry,
  o: { name: string; help: string; label?: string; read: () => Record<string, number> },
): void {
  const seen = new Map<string, number>();
  new Counter({
    name: o.name,
    help: o.help,
    labelNames: o.label ? [o.label] : [],
    registers: [registry],
    collect(this: Counter<string>) {
      for (const [value, now] of Object.entries(o.read())) {
        // Every series is shown from the first scrape, 0 included.
        this.inc(o.label ? { [o.label]: value } : {}, now - (seen.get(value) ?? 0));
        seen.set(value, now);
      }
    },
  });
}

/**
 * Parallel block execution is process-wide (docs/evm.md "Parallel execution"): producers, importers and
 * /chain/validate share its workers, so its series are the process's.
 */
function registerParallelExecution(registry: Registry): void {
  totalCounter(registry, {
    name: 'native_parallel_blocks_total',
    help: "Blocks whose EVM transactions ran in parallel (produced, imported or validated by this process's nodes)",
    read: () => ({ all: parallelTotals().blocks }),
  });
  totalCounter(registry, {
    name: 'native_parallel_blocks_abandoned_total',
    help: 'Parallel blocks that gave up their workers after 8 discarded results in a row (a hot contract)',
    read: () => ({ all: parallelTotals().abandoned }),
  });
  totalCounter(registry, {
    name: 'native_parallel_results_total',
    help: 'Worker results by outcome: committed as they were, discarded for a changed read (conflict), a state read the worker was not given (miss), not there when the main thread reached the transaction (late: it ran it itself)',
    label: 'outcome',
    read: () => {
      const t = parallelTotals();
      return { committed: t.committed, conflict: t.conflicts, miss: t.misses, late: t.late };
    },
  });
  new Gauge({
    name: 'native_parallel_workers',
    help: 'Speculation workers of parallel block execution that are up (0: off, or not started yet)',
    registers: [registry],
    collect(this: Gauge) {
      this.set(readyWorkers());
    },
  });
}
