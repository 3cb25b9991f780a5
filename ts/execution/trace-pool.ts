/**
 * debug_trace* and native_traceTransaction off the main thread: an EvmWorkerPool of its own (worker-pool.ts,
 * entry evm-worker.ts), apart from the call pool, so a 30 s trace never holds a worker an eth_call waits for.
 * A trace reads its block's parent state from the main thread's view of it by message, streams struct logs
 * back in chunks as produced, and stops itself at its timeout and output cap (docs/evm.md, Tracing).
 */
import { type SignedTransaction, ZERO_ADDRESS } from '../ledger/index.js';
import { accountKey, type KeyStr, type StateChanges } from '../state/index.js';
import type { BlockEnv } from './block-executor.js';
import { defaultCallWorkers } from './call-pool.js';
import { FEE_COLLECTOR } from './common.js';
import { isEvmTransaction } from './evm-tx.js';
import type { EvmBaseState } from './state-adapter.js';
import { type TraceJob, type TraceReply, type TraceTask, rebuildError, runTraceJob, unpackResult } from './trace/task.js';
import { TRACE_YIELD_STEPS, TraceTimeoutError, type TraceOptions, traceError } from './trace/types.js';
import { type CallState, EvmWorkerPool, type LiveTask, withCode } from './worker-pool.js';

/** Traces waiting for a worker, beyond those running (a trace holds its worker up to 30 s). */
export const DEFAULT_TRACE_QUEUE = 16;
/**
 * Trace workers keep the node's priority: a trace is a debugging job an operator asked for, bounded by the
 * pool (cores - 1 at once) and its 30 s maximum, so the main thread keeps a core; at nice +10 (the call
 * workers') a trace on a busy machine got a few percent of a core and ran into its timeout.
 */
const TRACE_NICE_INCREMENT = 0;
/** A trace's worker heap: callTracer and prestate results are built in memory (struct logs are capped at 50 MB). */
const TRACE_HEAP_MB = 1024;

/** One trace: what is traced, the environment of its block, the state before that block, the prefix to re-apply. */
export interface TraceRequest {
  job: TraceJob;
  env: BlockEnv;
  /** The state after the parent block (a history view, or a snapshot of the head for debug_traceCall). */
  state: CallState & EvmBaseState;
  prefix: readonly SignedTransaction[];
  /** The dev chain's state writes recorded with the block, applied before its first transaction (TraceSite). */
  devWrites?: StateChanges;
  opts: TraceOptions;
}

/** Runs traces: the result, or the trace's error (TraceTimeoutError, TraceOutputTooLargeError, a node error). */
export interface TraceRunner {
  run(req: TraceRequest): Promise<unknown>;
}

/**
 * On the calling thread (services without a node: benches, service tests): the same code as a worker runs,
 * yielding to the event loop every TRACE_YIELD_STEPS steps and waiting there for a streamed answer's client.
 */
export class InProcessTraceRunner implements TraceRunner {
  async run(req: TraceRequest): Promise<unknown> {
    const sink = req.opts.sink;
    const yieldNow = (): Promise<void> =>
      new Promise<void>((resolve) => setImmediate(resolve)).then(() => (sink ? sink.ready() : undefined));
    try {
      return await runTraceJob(
        req.job,
        {
          env: req.env,
          parentState: req.state,
          store: req.state,
          prefix: req.prefix,
          devWrites: req.devWrites,
          deadline: Date.now() + req.opts.timeoutMs,
          pace: (steps) => (steps % TRACE_YIELD_STEPS === 0 ? yieldNow() : undefined),
        },
        req.opts,
      );
    } catch (err) {
      throw traceError(err);
    }
  }
}

/** Accounts sent along with a task at most (a block trace's senders and recipients). */
const MAX_PREFETCH = 512;

/**
 * The accounts a trace reads first, sent with the task (a round trip each saved, ~0.1-0.3 ms): the sender
 * and recipient of every EVM transaction it runs (with a contract's code), the caller and callee of a
 * traced call, and the fee collector (the block's coinbase).
 */
function prefetch(req: TraceRequest): [KeyStr, Uint8Array | null][] {
  const keys = new Set<KeyStr>([accountKey(FEE_COLLECTOR)]);
  const add = (address: string | undefined) => {
    if (address && address !== ZERO_ADDRESS && keys.size < MAX_PREFETCH) keys.add(accountKey(address));
  };
  const { job } = req;
  const txs = job.kind === 'block' ? job.txs : job.kind === 'transaction' ? [job.tx] : [];
  for (const tx of [...req.prefix, ...txs]) {
    if (!isEvmTransaction(tx)) continue;
    add(tx.from_address);
    add(tx.to_address);
  }
  if (job.kind === 'call') {
    add(job.args.from);
    add(job.args.to);
  }
  return [...keys].flatMap((k) => withCode(req.state, k));
}

/** A trace's worker task: the environment without its BLOCKHASH callback, the options without the sink. */
function traceTask(req: TraceRequest, id: number, deadline: number): TraceTask {
  const { blockHash: _, ...env } = req.env;
  const { sink, ...opts } = req.opts;
  const stream = sink !== undefined;
  return {
    type: 'trace',
    job: req.job,
    env,
    prefix: req.prefix,
    devWrites: req.devWrites,
    opts: { ...opts, stream },
    prefetch: prefetch(req),
    deadline,
    id,
  };
}

export interface TracePoolOptions {
  /** Traces running at once (default: as many as call workers). */
  workers?: number;
  maxQueue?: number;
  onError?: (err: unknown) => void;
}

/** The node's trace pool; started on the first trace. */
export class TracePool implements TraceRunner {
  private readonly pool: EvmWorkerPool;

  constructor(opts: TracePoolOptions = {}) {
    this.pool = new EvmWorkerPool(
      {
        workers: opts.workers ?? defaultCallWorkers(),
        maxQueue: opts.maxQueue ?? DEFAULT_TRACE_QUEUE,
        maxHeapMb: TRACE_HEAP_MB,
        niceIncrement: TRACE_NICE_INCREMENT,
        onError: opts.onError,
      },
      'traces',
    );
  }

  /** Traces running or queued now. */
  get pending(): number {
    return this.pool.pending;
  }

  /** The worker threads (tests). */
  get threads(): EvmWorkerPool['threads'] {
    return this.pool.threads;
  }

  async run(req: TraceRequest): Promise<unknown> {
    const deadline = Date.now() + req.opts.timeoutMs;
    const live: LiveTask = { state: req.state, blockHash: req.env.blockHash, sink: req.opts.sink };
    const reply = await this.pool.run<TraceReply>({
      live,
      deadline,
      message: (id) => traceTask(req, id, deadline),
      timedOut: { kind: 'timeout' },
    });
    // A failure on this side (a view rolled back under the trace, a client gone) is the answer, whatever
    // the worker made of its failed request.
    if (live.failure !== undefined && reply.kind !== 'result') throw live.failure;
    if (reply.kind === 'timeout') throw new TraceTimeoutError();
    if (reply.kind === 'error') throw rebuildError(reply.error);
    return unpackResult(reply.result);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
