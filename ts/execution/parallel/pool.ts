/**
 * Whether blocks execute their EVM transactions in parallel, and the Piscina pool of speculation workers that
 * does it (docs/evm.md "Parallel execution"). Process-wide: block execution is one code path for producers,
 * importers and /chain/validate, so one switch turns it on for all of them. Off by default (the measured
 * choice for this machine, bench/RESULTS.md); the sequential path stays the reference either way.
 */
import { availableParallelism } from 'node:os';
import { MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { PARALLEL_PORT, type SpeculationTask } from './protocol.js';

export interface ParallelOptions {
  /** Speculation workers (the main thread executes too). */
  workers: number;
  /** Fewer EVM transactions than this in a block: sequential (parallelism cannot pay for its setup). */
  minTxs: number;
  /**
   * Share of the block's EVM transactions the main thread surely reaches before the workers (claiming chunks
   * from the block's end) get there, with one worker: nothing is shipped for them. With W workers the head is
   * mainShare * 2 / (W + 1). Where the main thread and the workers meet is their speeds' doing, not this.
   */
  mainShare: number;
  /**
   * Blocks during which a contract whose transactions made a block give up its workers (8 conflicts in a row)
   * counts as hot: a block mostly calling hot contracts runs sequentially from the start. 0: never.
   */
  hotBlocks: number;
  /**
   * The workers start with the first block that would use them (a node's default: a chain that never makes a
   * block of minTxs EVM transactions, such as a dev chain, never pays for them; that first block runs
   * sequentially). Otherwise they start at once.
   */
  lazy?: boolean;
  /**
   * Tests only: the main thread waits for each worker result instead of running a late transaction itself, so
   * every path (commit, conflict, miss) is taken whatever the machine's load. Never faster.
   */
  awaitWorkers?: boolean;
}

/** Workers: the cores but one (the main thread's), 1 to 4. */
export const defaultParallelWorkers = (): number => Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * A node's default (`--parallel-evm-workers`): the cores but one, started with the first block that wants them,
 * where there are two cores or more; none on one core (a worker could only take time from the main thread).
 */
export const defaultNodeParallelWorkers = (): number => (availableParallelism() >= 2 ? defaultParallelWorkers() : 0);

export const DEFAULT_PARALLEL_MIN_TXS = 64;
export const DEFAULT_PARALLEL_MAIN_SHARE = 0.45;
export const DEFAULT_PARALLEL_HOT_BLOCKS = 64;

let options: ParallelOptions | null = null;
let pool: Piscina | null = null;
/** The loaded workers' task ports (worker.ts); a worker still loading has none yet. */
let ports: MessagePort[] = [];

/**
 * Turns parallel execution on (options) or off (null). The workers start with the first switch on, at once, so
 * the first parallel block does not wait for their loading (~300 ms each; until a worker is up, the main thread
 * runs the block alone), or with the first block that wants them (`lazy`); switched off they stay idle until
 * closeParallelExecution.
 */
export async function configureParallelExecution(opts: Partial<ParallelOptions> | null): Promise<void> {
  if (opts === null) {
    options = null;
    return;
  }
  const next: ParallelOptions = {
    workers: opts.workers ?? defaultParallelWorkers(),
    minTxs: opts.minTxs ?? DEFAULT_PARALLEL_MIN_TXS,
    mainShare: opts.mainShare ?? DEFAULT_PARALLEL_MAIN_SHARE,
    hotBlocks: opts.hotBlocks ?? DEFAULT_PARALLEL_HOT_BLOCKS,
    lazy: opts.lazy === true,
    awaitWorkers: opts.awaitWorkers === true,
  };
  if (pool && pool.options.maxThreads !== next.workers) await closeParallelExecution();
  options = next;
  if (!next.lazy) startWorkers();
}

/** The workers of the options in force, started unless they are. */
export function startWorkers(): void {
  if (pool || options === null) return;
  pool = new Piscina({
    filename: new URL('./worker.js', import.meta.url).href,
    minThreads: options.workers,
    maxThreads: options.workers,
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: 1,
    // An idle Piscina worker blocks in Atomics.wait for its next task by default, deaf to its share port.
    atomics: 'disabled',
  });
  pool.on('message', takePort);
}

function takePort(m: unknown): void {
  const port = (m as Record<string, unknown> | null)?.[PARALLEL_PORT];
  if (!(port instanceof MessagePort)) return;
  ports.push(port);
  port.once('close', () => {
    ports = ports.filter((p) => p !== port);
  });
}

/** Parallel execution off and its workers ended (the node stops; tests). */
export async function closeParallelExecution(): Promise<void> {
  const p = pool;
  pool = null;
  options = null;
  for (const port of ports) port.close();
  ports = [];
  await p?.destroy();
}

/** The options in force, or null when blocks run sequentially. */
export const parallelOptions = (): Readonly<ParallelOptions> | null => options;

/** Workers ready to take a share now. */
export const readyWorkers = (): number => ports.length;

/**
 * Hands a share of a block to worker `i` (< readyWorkers()); its results arrive on the task's port. The task's
 * values and senders are transferred: each must own its whole ArrayBuffer (never a view of Buffer's pool).
 */
export function runSpeculation(i: number, task: SpeculationTask): void {
  ports[i].postMessage(task, [task.port, task.values, task.senders.buffer as ArrayBuffer]);
}
