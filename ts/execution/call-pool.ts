/**
 * eth_call / eth_estimateGas off the main thread: an EvmWorkerPool of its own (worker-pool.ts), each call
 * reading a StateSnapshot through its worker's state channel (docs/evm.md "Calls off the main thread").
 */
import { availableParallelism } from 'node:os';
import { accountKey, codeKey, type KeyStr } from '../state/index.js';
import { ZERO_ADDRESS } from '../ledger/index.js';
import type { BlockEnv } from './block-executor.js';
import type { CallArgs, CallOverrides } from './call.js';
import type { SimulateSpec } from './simulate.js';
import { type CallKind, type CallReply, type CallTask, runCall } from './call-task.js';
import { type CallState, EvmWorkerPool } from './worker-pool.js';

export { CallPoolBusyError, CallPoolClosedError, type CallState, GRACE_MS } from './worker-pool.js';

/** geth's `--rpc.gascap` default: the gas an eth_call may use and the top of an estimate's search. */
export const DEFAULT_RPC_GAS_CAP = 50_000_000n;
/** geth's `--rpc.evmtimeout` default. */
export const DEFAULT_RPC_EVM_TIMEOUT_MS = 5000;
/**
 * The dev chain's `--rpc-evm-inline`: its tools' calls (estimates before each send, views) take a few ms, which a
 * worker would double with message round trips; a call needing more than this still moves to a worker.
 */
export const DEV_RPC_EVM_INLINE_MS = 100;
/** Calls waiting for a worker, beyond those running. */
export const DEFAULT_RPC_EVM_QUEUE = 32;

/** Leave a core to the main thread (HTTP, block production); at most 4 workers. */
export function defaultCallWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export interface CallLimits {
  /** Gas of an eth_call without `gas`, and the most any call may use; 0n = no cap. */
  gasCap: bigint;
  timeoutMs: number;
}

export interface CallPoolOptions extends CallLimits {
  workers: number;
  maxQueue: number;
  /**
   * A call first runs on the calling thread for up to this long (ms) and moves to a worker only when it needs
   * more (`--rpc-evm-inline`; 0 = always a worker). Skipped while workers are busy: calls that long are likely
   * more of the same.
   */
  inlineMs?: number;
  /** A worker failed outside a call (it is replaced); the calls it ran fail on their own. */
  onError?: (err: unknown) => void;
}

/** One call to run: its kind, the environment of the next block, the state it reads. */
export interface CallRequest {
  kind: CallKind;
  env: BlockEnv;
  snapshot: CallState;
  args: CallArgs;
  /** estimate: the highest gas limit searched. */
  cap: bigint;
  /** estimate: the caller raises a lower answer to this (the interface's floor with data). */
  floor?: bigint;
  /** State overrides (the block's are in env). */
  overrides?: CallOverrides;
  /** simulate: the blocks of calls. */
  simulate?: SimulateSpec;
}

/** Runs calls; the pool in a node, in-process where no node runs (benches, service tests). */
export interface CallRunner extends CallLimits {
  run(req: CallRequest): Promise<CallReply>;
}

/** In-process: the same code as a worker runs, on the calling thread (nothing else runs meanwhile). */
export class InProcessCallRunner implements CallRunner {
  constructor(
    readonly gasCap = DEFAULT_RPC_GAS_CAP,
    readonly timeoutMs = DEFAULT_RPC_EVM_TIMEOUT_MS,
  ) {}

  run(req: CallRequest): Promise<CallReply> {
    return runCall(
      req.kind,
      req.env,
      req.snapshot,
      req.args,
      req.cap,
      Date.now() + this.timeoutMs,
      req.floor,
      req.overrides,
      req.simulate,
    );
  }
}

/** The values a call reads first, sent with the task. */
function prefetch(snapshot: CallState, args: CallArgs): [KeyStr, Uint8Array | null][] {
  const keys: KeyStr[] = [];
  if (args.to) keys.push(accountKey(args.to), codeKey(args.to));
  // The EVM reads the caller's account first (the zero address when the call names none).
  const from = args.from ?? ZERO_ADDRESS;
  if (from !== args.to) keys.push(accountKey(from));
  return keys.map((k) => [k, snapshot.get(k) ?? null]);
}

/** A call's worker task: the environment without its BLOCKHASH callback, the first reads along. */
function callTask(req: CallRequest, id: number, deadline: number): CallTask {
  const { blockHash: _, ...env } = req.env;
  return {
    type: 'call',
    kind: req.kind,
    env,
    args: req.args,
    cap: req.cap,
    floor: req.floor,
    overrides: req.overrides,
    simulate: req.simulate,
    deadline,
    prefetch: prefetch(req.snapshot, req.args),
    id,
  };
}

/** The call pool: its own workers and bounds (`--rpc-evm-workers`, `--rpc-evm-queue`, `--rpc-evmtimeout`). */
export class CallPool implements CallRunner {
  private readonly pool: EvmWorkerPool;
  readonly gasCap: bigint;
  readonly timeoutMs: number;

  constructor(readonly opts: CallPoolOptions) {
    this.gasCap = opts.gasCap;
    this.timeoutMs = opts.timeoutMs;
    // A call cannot need more (memory expansion is priced quadratically); a runaway one dies alone. Calls
    // come from anyone, as many as the queue takes: contract code yields the CPU to the main thread.
    this.pool = new EvmWorkerPool({ ...opts, maxHeapMb: 512, niceIncrement: 10 }, 'EVM calls');
  }

  /** Calls running or queued at most. */
  get capacity(): number {
    return this.pool.capacity;
  }

  /** Calls running or queued now. */
  get pending(): number {
    return this.pool.pending;
  }

  /** The worker threads started so far (diagnostics and tests). */
  get threads(): readonly import('node:worker_threads').Worker[] {
    return this.pool.threads;
  }

  async run(req: CallRequest): Promise<CallReply> {
    const deadline = Date.now() + this.timeoutMs;
    const inlineMs = this.opts.inlineMs ?? 0;
    if (inlineMs > 0 && this.pool.pending === 0) {
      // A short call answers here, without a worker's message round trips for its state reads (or, on a node's
      // first call, the workers' loading). Cut off at inlineMs, it starts over on a worker from the same
      // snapshot and environment, so its answer is the one a worker alone would have given.
      const cutoff = Math.min(deadline, Date.now() + inlineMs);
      const reply = await runCall(
        req.kind,
        req.env,
        req.snapshot,
        req.args,
        req.cap,
        cutoff,
        req.floor,
        req.overrides,
        req.simulate,
      );
      if (reply.kind !== 'timeout' || cutoff === deadline) return reply;
    }
    return this.pool.run<CallReply>({
      live: { state: req.snapshot, blockHash: req.env.blockHash },
      deadline,
      message: (id) => callTask(req, id, deadline),
      timedOut: { kind: 'timeout' },
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
