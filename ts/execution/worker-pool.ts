/**
 * A bounded pool of EVM worker threads (Piscina, entry evm-worker.ts) that read state by message from the
 * main thread (docs/evm.md "Calls off the main thread"). The call pool (eth_call, eth_estimateGas) and the
 * trace pool (debug_trace*) are two instances with their own threads and bounds, so a 30 s trace never
 * holds a worker an eth_call waits for.
 *
 * Bounded: `workers` tasks run at once, `maxQueue` more wait in the pool's own queue; beyond that run()
 * refuses at once. Every task has a deadline, queueing included: a task still queued then ends without
 * touching a worker; a running one is stopped by the worker itself at its next check (deadline.ts), is
 * answered as timed out by the pool ANSWER_GRACE_MS after its deadline whatever the worker does (a starved
 * worker never delays the answer), and its worker is terminated when it has not finished GRACE_MS after
 * the deadline (Piscina replaces it). The task's slot stays taken until its worker finished or was replaced.
 */
import { MessagePort as MessagePortClass, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { NS, type KeyStr } from '../state/index.js';
import { EvmBusyError } from '../util/index.js';
import type { StructLogSink } from './trace/types.js';
import { STATE_PORT, type StateReply, type StateRequest } from './remote-state.js';

/** How long past its deadline a running task may take to stop itself before its worker is terminated. */
export const GRACE_MS = 1000;
/** How long past its deadline a task is answered as timed out, finished or not. */
export const ANSWER_GRACE_MS = 20;

/**
 * The state a task reads, unchanged while it runs: a snapshot of the head (snapshots.ts) or a view of a
 * past height (chain/state-history.ts). Synchronous reads: the pool answers workers from it in one tick.
 */
export interface CallState {
  get(key: KeyStr): Buffer | undefined;
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr>;
}

/** What the main thread serves a running task from. */
export interface LiveTask {
  state: CallState;
  /** BLOCKHASH reads. */
  blockHash(height: number): Promise<Uint8Array | null>;
  /** Where a streamed trace's chunks go (traces only). */
  sink?: StructLogSink;
  /**
   * The first failure on this side while serving the task (a read of a view the chain rolled back under, a
   * sink whose client went away): the task's answer, whatever the worker makes of the failed request.
   */
  failure?: unknown;
}

export interface WorkerPoolOptions {
  workers: number;
  maxQueue: number;
  /** Heap of a worker: a task that needs more dies alone (its worker is replaced). */
  maxHeapMb: number;
  /** Niceness the workers add to themselves once loaded (evm-worker.ts); 0 keeps the node's priority. */
  niceIncrement: number;
  /** A worker failed outside a task (it is replaced); the tasks it ran fail on their own. */
  onError?: (err: unknown) => void;
}

/**
 * The pool's running and queued tasks are at their bound: the node's EvmBusyError as it is, so every transport
 * answers it (503, -32005, RESOURCE_EXHAUSTED) with no translation on the way.
 */
export class CallPoolBusyError extends EvmBusyError {
  readonly code = 'CALL_POOL_BUSY';
  constructor(
    readonly capacity: number,
    what = 'EVM calls',
  ) {
    super(`too many ${what} in progress (${capacity} running or queued); try again later`);
  }
}

/** A task after the pool closed (the node is stopping). */
export class CallPoolClosedError extends Error {
  readonly code = 'CALL_POOL_CLOSED';
  constructor() {
    super('the node is stopping: EVM calls are no longer served');
  }
}

/** A worker failed under a task (terminated, out of memory): the task has no answer. */
export class WorkerFailedError extends Error {
  readonly code = 'WORKER_FAILED';
}

/** Answers a worker's requests from the live task each names. */
function serve(port: MessagePort, live: ReadonlyMap<number, LiveTask>): void {
  const reply = (r: StateReply) => port.postMessage(r);
  port.on('message', (m: StateRequest) => {
    const task = live.get(m.task);
    if (!task) {
      reply({ id: m.id, error: 'call ended' });
      return;
    }
    const fail = (err: unknown): void => {
      task.failure ??= err;
      reply({ id: m.id, error: (err as Error).message });
    };
    try {
      switch (m.op) {
        case 'get':
          reply({ id: m.id, values: withCode(task.state, m.key) });
          return;
        case 'many':
          reply({ id: m.id, values: m.keys.flatMap((k) => withCode(task.state, k)) });
          return;
        case 'keys':
          reply({ id: m.id, keys: [...task.state.storageKeysOf(m.owner)] });
          return;
        case 'hash':
          task.blockHash(m.height).then((hash) => reply({ id: m.id, hash }), fail);
          return;
        case 'chunk':
          chunk(task, m.bytes, () => reply({ id: m.id }), fail);
          return;
      }
    } catch (err) {
      fail(err);
    }
  });
}

/** A streamed trace's chunk goes to its sink; the worker hears back once the sink takes more. */
function chunk(task: LiveTask, bytes: Uint8Array, ready: () => void, fail: (err: unknown) => void): void {
  const sink = task.sink;
  if (!sink) fail(new Error('the task has no stream'));
  else if (task.failure !== undefined) fail(task.failure);
  else {
    try {
      sink.chunk(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    } catch (err) {
      fail(err);
      return;
    }
    sink.ready().then(ready, fail);
  }
}

/** A contract's account comes with its code: the EVM reads the code right after (one round trip saved). */
export function withCode(state: CallState, key: KeyStr): [KeyStr, Uint8Array | null][] {
  const v = state.get(key) ?? null;
  const out: [KeyStr, Uint8Array | null][] = [[key, v]];
  if (v !== null && key.charCodeAt(0) === NS.account && v.length >= 72) {
    const ck = String.fromCharCode(NS.code) + key.slice(1);
    out.push([ck, state.get(ck) ?? null]);
  }
  return out;
}

/** A task waiting for a worker; start() hands it the slot of a task that ended. */
interface Waiting {
  start: () => void;
  timer: NodeJS.Timeout;
}

/** One task for a worker: what its requests are served from, and the message the worker gets. */
export interface PoolTask<Reply> {
  live: LiveTask;
  /** Epoch milliseconds; queueing counts. */
  deadline: number;
  /** The task message (structured-cloned to the worker), given the id its requests will carry. */
  message: (id: number) => unknown;
  transferList?: ArrayBuffer[];
  /** The answer when the deadline passes first. */
  timedOut: Reply;
}

export class EvmWorkerPool {
  private pool: Piscina | null = null;
  /** Slots taken by tasks handed to Piscina: never more than the workers, so each starts at once. */
  private running = 0;
  /** Tasks waiting for a worker, FIFO; the pool's own queue, so a task past its deadline leaves it untouched. */
  private readonly queue: Waiting[] = [];
  /** Tasks on workers by id: their requests are answered from these. */
  private readonly live = new Map<number, LiveTask>();
  /** The workers' state ports: closed with the pool (a port of a worker terminated mid-task stays open otherwise). */
  private readonly ports = new Set<MessagePort>();
  private nextTask = 1;
  private closed = false;

  constructor(
    readonly opts: WorkerPoolOptions,
    /** Names what the pool runs in its busy error ("EVM calls", "traces"). */
    private readonly what: string,
  ) {}

  /** Tasks running or queued at most. */
  get capacity(): number {
    return this.opts.workers + this.opts.maxQueue;
  }

  /** Tasks running or queued now. */
  get pending(): number {
    return this.running + this.queue.length;
  }

  /** The worker threads (diagnostics and tests: a test terminates one mid-task). */
  get threads(): readonly import('node:worker_threads').Worker[] {
    return this.pool?.threads ?? [];
  }

  /**
   * Started on first use: a node that serves no calls spawns no threads (~300 ms of loading each). Each
   * worker sends its state port as it starts (evm-worker.ts); a replaced worker sends a new one.
   */
  private piscina(): Piscina {
    // A task that waited for a slot while the pool closed must not start a new pool (it would outlive the node).
    if (this.closed) throw new CallPoolClosedError();
    if (!this.pool) {
      this.pool = new Piscina({
        filename: new URL('./evm-worker.js', import.meta.url).href,
        minThreads: this.opts.workers,
        maxThreads: this.opts.workers,
        idleTimeout: Number.POSITIVE_INFINITY,
        concurrentTasksPerWorker: 1,
        resourceLimits: { maxOldGenerationSizeMb: this.opts.maxHeapMb },
        workerData: { niceIncrement: this.opts.niceIncrement },
      });
      this.pool.on('message', (m: unknown) => {
        const port = (m as Record<string, unknown> | null)?.[STATE_PORT];
        if (port instanceof MessagePortClass) {
          this.ports.add(port);
          port.once('close', () => this.ports.delete(port));
          serve(port, this.live);
        }
      });
      // Without a listener an 'error' event would throw on the main thread.
      this.pool.on('error', (err: unknown) => this.opts.onError?.(err));
    }
    return this.pool;
  }

  async run<Reply>(task: PoolTask<Reply>): Promise<Reply> {
    if (this.closed) throw new CallPoolClosedError();
    if (this.pending >= this.capacity) throw new CallPoolBusyError(this.capacity, this.what);
    if (this.running < this.opts.workers) this.running++;
    else {
      const started = await new Promise<boolean>((resolve) => {
        const w: Waiting = {
          start: () => resolve(true),
          // Still waiting at the deadline: the task ends here, no worker touched.
          timer: setTimeout(
            () => {
              this.queue.splice(this.queue.indexOf(w), 1);
              resolve(false);
            },
            Math.max(0, task.deadline - Date.now()),
          ),
        };
        this.queue.push(w);
      });
      if (!started) return task.timedOut;
    }
    const done = this.dispatch(task);
    // The slot passes to the oldest waiting task, or is freed, once the worker is done with this one.
    done.settled.then(() => {
      const next = this.queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.start();
      } else this.running--;
    });
    return done.answer;
  }

  /**
   * Runs one task on a worker. `answer` is the worker's reply, or `timedOut` ANSWER_GRACE_MS past the
   * deadline; `settled` resolves when the worker is done with the task (it stopped itself, or it was
   * terminated GRACE_MS past the deadline and Piscina replaced it).
   */
  private dispatch<Reply>(task: PoolTask<Reply>): { answer: Promise<Reply>; settled: Promise<void> } {
    const id = this.nextTask++;
    let message: unknown;
    try {
      message = task.message(id);
    } catch (err) {
      // The task could not be built (its state view failed): its own error, no worker touched.
      return { answer: Promise.reject(err), settled: Promise.resolve() };
    }
    this.live.set(id, task.live);
    const abort = new AbortController();
    const left = Math.max(0, task.deadline - Date.now());
    const kill = setTimeout(() => abort.abort(), left + GRACE_MS);
    let late: NodeJS.Timeout | undefined;
    const lateAnswer = new Promise<Reply>((resolve) => {
      late = setTimeout(() => {
        // Requests of a task answered as timed out fail from now on: the worker stops at its next read.
        this.live.delete(id);
        resolve(task.timedOut);
      }, left + ANSWER_GRACE_MS);
    });
    let worker: Promise<Reply>;
    try {
      worker = this.piscina().run(message, { signal: abort.signal, transferList: task.transferList }) as Promise<Reply>;
    } catch (err) {
      worker = Promise.reject(err);
    }
    const reply = worker.then(
      (r) => r,
      (err: unknown) => {
        if (abort.signal.aborted) return task.timedOut;
        if (err instanceof CallPoolClosedError) throw err;
        throw new WorkerFailedError(`EVM worker failed: ${(err as Error).message}`);
      },
    );
    const settled = reply.then(
      () => undefined,
      () => undefined,
    );
    settled.then(() => {
      clearTimeout(kill);
      clearTimeout(late);
      this.live.delete(id);
    });
    return { answer: Promise.race([reply, lateAnswer]), settled };
  }

  async close(): Promise<void> {
    this.closed = true;
    // Waiting tasks end now (with CallPoolClosedError), not at their deadline.
    for (const w of this.queue.splice(0)) {
      clearTimeout(w.timer);
      w.start();
    }
    const p = this.pool;
    this.pool = null;
    await p?.destroy();
    for (const port of this.ports) port.close();
    this.ports.clear();
  }
}
