/**
 * eth_call / eth_estimateGas off the main thread: a Piscina pool of call workers (call-worker.ts), each
 * call reading a StateSnapshot through its worker's state channel (docs/evm.md "Calls off the main thread").
 * Bounded: `workers` calls run at once, `maxQueue` more wait in the pool's own queue; beyond that run()
 * refuses at once. Every call has a deadline, queueing included: a call still queued then ends without
 * touching a worker; a running one is stopped by the worker itself at its next check (deadline.ts), and
 * a worker that has not answered GRACE_MS later is terminated (Piscina replaces it).
 */
import { availableParallelism } from 'node:os';
import { MessagePort as MessagePortClass, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { NS, accountKey, codeKey } from '../state/accounts.js';
import type { KeyStr } from '../state/state-store.js';
import { ZERO_ADDRESS } from '../ledger/units.js';
import type { BlockEnv } from './block-executor.js';
import type { CallArgs } from './call.js';
import { type CallKind, type CallReply, type CallTask, runCall } from './call-task.js';
import { STATE_PORT, type StateReply, type StateRequest } from './remote-state.js';

/** geth's `--rpc.gascap` default: the gas an eth_call may use and the top of an estimate's search. */
export const DEFAULT_RPC_GAS_CAP = 50_000_000n;
/** geth's `--rpc.evmtimeout` default. */
export const DEFAULT_RPC_EVM_TIMEOUT_MS = 5000;
/** Calls waiting for a worker, beyond those running. */
export const DEFAULT_RPC_EVM_QUEUE = 32;
/** How long past its deadline a running call may take to stop itself before its worker is terminated. */
export const GRACE_MS = 1000;

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
  /** A worker failed outside a call (it is replaced); the calls it ran fail on their own. */
  onError?: (err: unknown) => void;
}

/**
 * The state a call reads, unchanged while it runs: a snapshot of the head (snapshots.ts) or a view of a
 * past height (chain/state-history.ts). Synchronous reads: the pool answers workers from it in one tick.
 */
export interface CallState {
  get(key: KeyStr): Buffer | undefined;
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr>;
}

/** One call to run: its kind, the environment of the next block, the state it reads. */
export interface CallRequest {
  kind: CallKind;
  env: BlockEnv;
  snapshot: CallState;
  args: CallArgs;
  /** estimate: the highest gas limit searched. */
  cap: bigint;
}

/** Runs calls; the pool in a node, in-process where no node runs (benches, service tests). */
export interface CallRunner extends CallLimits {
  run(req: CallRequest): Promise<CallReply>;
}

/** The pool's running and queued calls are at their bound. */
export class CallPoolBusyError extends Error {
  readonly code = 'CALL_POOL_BUSY';
  constructor(readonly capacity: number) {
    super(`too many EVM calls in progress (${capacity} running or queued); try again later`);
  }
}

/** A call after the pool closed (the node is stopping). */
export class CallPoolClosedError extends Error {
  readonly code = 'CALL_POOL_CLOSED';
  constructor() {
    super('the node is stopping: EVM calls are no longer served');
  }
}

/** In-process: the same code as a worker runs, on the calling thread (nothing else runs meanwhile). */
export class InProcessCallRunner implements CallRunner {
  constructor(
    readonly gasCap = DEFAULT_RPC_GAS_CAP,
    readonly timeoutMs = DEFAULT_RPC_EVM_TIMEOUT_MS,
  ) {}

  run(req: CallRequest): Promise<CallReply> {
    return runCall(req.kind, req.env, req.snapshot, req.args, req.cap, Date.now() + this.timeoutMs);
  }
}

/** A call on a worker: what its state requests are answered from. */
interface Live {
  snapshot: CallState;
  env: BlockEnv;
}

/** Answers a worker's state requests from the snapshot of the call each names. */
function serve(port: MessagePort, live: ReadonlyMap<number, Live>): void {
  const reply = (r: StateReply) => port.postMessage(r);
  port.on('message', (m: StateRequest) => {
    const call = live.get(m.task);
    if (!call) {
      reply({ id: m.id, error: 'call ended' });
      return;
    }
    try {
      switch (m.op) {
        case 'get':
          reply({ id: m.id, values: withCode(call.snapshot, m.key) });
          return;
        case 'keys':
          reply({ id: m.id, keys: [...call.snapshot.storageKeysOf(m.owner)] });
          return;
        case 'hash':
          call.env.blockHash(m.height).then(
            (hash) => reply({ id: m.id, hash }),
            (err: Error) => reply({ id: m.id, error: err.message }),
          );
          return;
      }
    } catch (err) {
      reply({ id: m.id, error: (err as Error).message });
    }
  });
}

/** A contract's account comes with its code: the EVM reads the code right after (one round trip saved). */
function withCode(snapshot: CallState, key: KeyStr): [KeyStr, Uint8Array | null][] {
  const v = snapshot.get(key) ?? null;
  const out: [KeyStr, Uint8Array | null][] = [[key, v]];
  if (v !== null && key.charCodeAt(0) === NS.account && v.length >= 72) {
    const ck = String.fromCharCode(NS.code) + key.slice(1);
    out.push([ck, snapshot.get(ck) ?? null]);
  }
  return out;
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

/** A call waiting for a worker; start() hands it the slot of a call that ended. */
interface Waiting {
  start: () => void;
  timer: NodeJS.Timeout;
}

export class CallPool implements CallRunner {
  private pool: Piscina | null = null;
  /** Slots taken by calls handed to Piscina: never more than the workers, so each starts at once. */
  private running = 0;
  /** Calls waiting for a worker, FIFO; the pool's own queue, so a call past its deadline leaves it untouched. */
  private readonly queue: Waiting[] = [];
  /** Calls on workers by task id: their state requests are answered from these. */
  private readonly live = new Map<number, Live>();
  /** The workers' state ports: closed with the pool (a port of a worker terminated mid-call stays open otherwise). */
  private readonly ports = new Set<MessagePort>();
  private nextTask = 1;
  private closed = false;
  readonly gasCap: bigint;
  readonly timeoutMs: number;

  constructor(readonly opts: CallPoolOptions) {
    this.gasCap = opts.gasCap;
    this.timeoutMs = opts.timeoutMs;
  }

  /** Calls running or queued at most. */
  get capacity(): number {
    return this.opts.workers + this.opts.maxQueue;
  }

  /** Calls running or queued now. */
  get pending(): number {
    return this.running + this.queue.length;
  }

  /**
   * Started on first use: a node that serves no calls spawns no threads (~300 ms of loading each). Each
   * worker sends its state port as it starts (call-worker.ts); a replaced worker sends a new one.
   */
  private piscina(): Piscina {
    // A call that waited for a slot while the pool closed must not start a new pool (it would outlive the node).
    if (this.closed) throw new CallPoolClosedError();
    if (!this.pool) {
      this.pool = new Piscina({
        filename: new URL('./call-worker.js', import.meta.url).href,
        minThreads: this.opts.workers,
        maxThreads: this.opts.workers,
        idleTimeout: Number.POSITIVE_INFINITY,
        concurrentTasksPerWorker: 1,
        // A call cannot need more (memory expansion is priced quadratically); a runaway one dies alone.
        resourceLimits: { maxOldGenerationSizeMb: 512 },
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

  async run(req: CallRequest): Promise<CallReply> {
    if (this.closed) throw new CallPoolClosedError();
    if (this.pending >= this.capacity) throw new CallPoolBusyError(this.capacity);
    const deadline = Date.now() + this.timeoutMs;
    if (this.running < this.opts.workers) this.running++;
    else {
      const started = await new Promise<boolean>((resolve) => {
        const w: Waiting = {
          start: () => resolve(true),
          // Still waiting at the deadline: the call ends here, no worker touched.
          timer: setTimeout(() => {
            this.queue.splice(this.queue.indexOf(w), 1);
            resolve(false);
          }, this.timeoutMs),
        };
        this.queue.push(w);
      });
      if (!started) return { kind: 'timeout' };
    }
    try {
      return await this.dispatch(req, deadline);
    } finally {
      // The slot passes to the oldest waiting call, or is freed.
      const next = this.queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.start();
      } else this.running--;
    }
  }

  /**
   * Runs one call on a worker. The worker stops itself at the deadline (deadline.ts); one that has not
   * answered GRACE_MS later is terminated (Piscina starts a new one) and the call times out.
   */
  private async dispatch(req: CallRequest, deadline: number): Promise<CallReply> {
    const id = this.nextTask++;
    this.live.set(id, { snapshot: req.snapshot, env: req.env });
    const abort = new AbortController();
    const kill = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()) + GRACE_MS);
    const { env } = req;
    const task: CallTask = {
      kind: req.kind,
      env: {
        height: env.height,
        timestamp: env.timestamp,
        proposer: env.proposer,
        chainId: env.chainId,
        hardfork: env.hardfork,
        tokenomicsV2Height: env.tokenomicsV2Height,
        evmActivationHeight: env.evmActivationHeight,
        ledger: env.ledger,
      },
      args: req.args,
      cap: req.cap,
      deadline,
      prefetch: prefetch(req.snapshot, req.args),
      id,
    };
    try {
      return (await this.piscina().run(task, { signal: abort.signal })) as CallReply;
    } catch (err) {
      if (abort.signal.aborted) return { kind: 'timeout' };
      throw err;
    } finally {
      clearTimeout(kill);
      this.live.delete(id);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    // Waiting calls end now (with CallPoolClosedError), not at their deadline.
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
