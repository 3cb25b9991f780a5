import { Counter, Gauge, collectDefaultMetrics, Registry } from 'prom-client';
import { type ParallelTotals, parallelTotals, readyWorkers } from '../execution/index.js';

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

/** A counter that follows a process-wide running total, read at each scrape. */
function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect(this: Counter) {
      const now = read();
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}

/**
 * Parallel block execution is process-wide (docs/evm.md "Parallel execution"): producers, importers and
 * /chain/validate share its workers, so its series are the process's.
 */
function registerParallelExecution(registry: Registry): void {
  totalCounter(
    registry,
    'native_parallel_blocks_total',
    "Blocks whose EVM transactions ran in parallel (produced, imported or validated by this process's nodes)",
    () => parallelTotals().blocks,
  );
  totalCounter(
    registry,
    'native_parallel_blocks_abandoned_total',
    'Parallel blocks that gave up their workers after 8 discarded results in a row (a hot contract)',
    () => parallelTotals().abandoned,
  );
  const outcomes: [string, keyof ParallelTotals][] = [
    ['committed', 'committed'],
    ['conflict', 'conflicts'],
    ['miss', 'misses'],
    ['late', 'late'],
  ];
  const seen = new Map<string, number>();
  new Counter({
    name: 'native_parallel_results_total',
    help: 'Worker results by outcome: committed as they were, discarded for a changed read (conflict), a state read the worker was not given (miss), not there when the main thread reached the transaction (late: it ran it itself)',
    labelNames: ['outcome'],
    registers: [registry],
    collect(this: Counter<'outcome'>) {
      const t = parallelTotals();
      for (const [outcome, key] of outcomes) {
        const now = t[key];
        const before = seen.get(outcome) ?? 0;
        // Every outcome is shown from the first scrape, 0 included.
        this.inc({ outcome }, now - before);
        seen.set(outcome, now);
      }
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
