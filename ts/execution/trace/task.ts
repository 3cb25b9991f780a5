/**
 * One trace as a task: what the main thread sends a trace worker (evm-worker.ts), what comes back, and the
 * code that runs it, in a worker over a RemoteStateView or in-process over a state view (trace-pool.ts).
 */
import { Piscina } from 'piscina';
import type { NativeEvent, SignedTransaction } from '../../ledger/index.js';
import type { KeyStr, StateChanges } from '../../state/index.js';
import { type FailureStatus, NodeError, RawJson } from '../../util/index.js';
import type { BlockEnv } from '../block-executor.js';
import type { CallArgs, CallOverrides } from '../call.js';
import type { CallEnvData } from '../call-task.js';
import { RemoteStateView, type StateChannel } from '../remote-state.js';
import { traceNative } from './native.js';
import { type TraceSite, traceBlockTransactions, traceCall, traceTransaction } from './run.js';
import { type StructLogSink, TraceOutputTooLargeError, TraceTimeoutError, type TraceOptions, traceError } from './types.js';

/** A native operation's receipt facts its trace reports (status, failure reason, events). */
export interface NativeReceipt {
  status: number;
  output: Uint8Array;
  events?: NativeEvent[];
}

/** What is traced on the site (the block's environment, the state before it, its prefix re-applied). */
export type TraceJob =
  /** debug_traceTransaction */
  | { kind: 'transaction'; tx: SignedTransaction }
  /** debug_traceBlockBy*: every transaction of the block; `evm[i]` says which are traced. */
  | { kind: 'block'; txs: SignedTransaction[]; evm: boolean[] }
  /** debug_traceCall */
  | { kind: 'call'; args: CallArgs; overrides?: CallOverrides }
  /** native_traceTransaction */
  | { kind: 'native'; tx: SignedTransaction; receipt?: NativeReceipt };

/** Options as they cross to a worker: no sink; `stream` says the struct logs come back in chunks as produced. */
export type TaskTraceOptions = Omit<TraceOptions, 'sink'> & { stream: boolean };

export interface TraceTask {
  type: 'trace';
  job: TraceJob;
  env: CallEnvData;
  prefix: readonly SignedTransaction[];
  /** The block's dev writes (TraceSite.devWrites). */
  devWrites?: StateChanges;
  opts: TaskTraceOptions;
  /** Values sent along to save round trips (trace-pool.ts). */
  prefetch: [KeyStr, Uint8Array | null][];
  /** Epoch milliseconds: the trace's timeout, queueing included. */
  deadline: number;
  /** Names the task in the worker's state requests (the main thread maps it to the task's state view). */
  id: number;
}

/** An error as it crosses back: its class name, words and status (rebuilt as a NodeError on the main thread). */
export interface ErrorData {
  name: string;
  message: string;
  status?: FailureStatus;
  data?: unknown;
}

/** Struct-log JSON text crossing threads: its bytes moved, not a string (made once on the main thread). */
interface RawBytes {
  rawJson: Uint8Array[];
}

export type TraceReply = { kind: 'result'; result: unknown } | { kind: 'error'; error: ErrorData } | { kind: 'timeout' };

/** Runs a job on its site: the tracer's result (a block trace: one entry per transaction). */
export async function runTraceJob(job: TraceJob, site: TraceSite, opts: TraceOptions): Promise<unknown> {
  switch (job.kind) {
    case 'transaction':
      return (await traceTransaction(site, job.tx, opts)).result;
    case 'block':
      return traceBlockTransactions(site, job.txs, job.evm, opts);
    case 'call':
      return traceCall(site, job.args, opts, job.overrides);
    case 'native':
      return traceNative(site, job.tx, job.receipt);
  }
}

/** Bytes that may move to the other thread: a view whose buffer is its own (not a slice of Node's shared pool). */
function movableBytes(b: Buffer, transfer: ArrayBuffer[]): Uint8Array {
  if (b.buffer.byteLength <= Buffer.poolSize) return new Uint8Array(b);
  transfer.push(b.buffer as ArrayBuffer);
  return b;
}

/** Replaces a result's struct-log RawJson (top level, or per entry of a block trace) by its bytes. */
function packResult(result: unknown, transfer: ArrayBuffer[]): unknown {
  const pack = (r: unknown): unknown => {
    if (r === null || typeof r !== 'object' || !('structLogs' in r && r.structLogs instanceof RawJson)) return r;
    const raw: RawBytes = { rawJson: [movableBytes(Buffer.from(r.structLogs.text, 'latin1'), transfer)] };
    return { ...r, structLogs: raw };
  };
  if (!Array.isArray(result)) return pack(result);
  return result.map((e: Record<string, unknown>) => ('result' in e ? { ...e, result: pack(e.result) } : e));
}

/** The inverse of packResult, on the main thread. */
export function unpackResult(result: unknown): unknown {
  const unpack = (r: unknown): unknown => {
    if (r === null || typeof r !== 'object' || !('structLogs' in r)) return r;
    const s = r.structLogs as RawBytes | undefined;
    if (!s || !Array.isArray(s.rawJson)) return r;
    const text = Buffer.concat(s.rawJson.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength))).toString('latin1');
    return { ...r, structLogs: new RawJson(text) };
  };
  if (!Array.isArray(result)) return unpack(result);
  return result.map((e: Record<string, unknown>) => ('result' in e ? { ...e, result: unpack(e.result) } : e));
}

/** The words and status of an error, to rebuild it on the other side. */
export function errorData(err: unknown): ErrorData {
  const e = err instanceof Error ? err : new Error(String(err));
  if (!(e instanceof NodeError)) return { name: e.name, message: e.message };
  return { name: e.name, message: e.message, status: e.status, data: e.data };
}

/**
 * The error a worker reported: the trace's own classes as such, other node errors with their status (traces
 * answer JSON-RPC, which maps none of a worker's failures by class: run.ts words them as ServerError).
 */
export function rebuildError(d: ErrorData): Error {
  if (d.name === TraceTimeoutError.name) return new TraceTimeoutError();
  if (d.name === TraceOutputTooLargeError.name) return new TraceOutputTooLargeError();
  if (d.status === undefined) return Object.assign(new Error(d.message), { name: d.name });
  const e = new NodeError(d.message, d.status, d.data);
  e.name = d.name;
  return e;
}

/**
 * Streamed struct logs in a worker: each chunk is a request to the main thread, moved rather than copied,
 * answered when the client's socket takes more. The trace waits for that answer before the next step
 * (`behind`): a slow client slows the trace instead of growing memory, a client gone away stops it.
 */
class ChannelSink implements StructLogSink {
  private pending: Promise<unknown> | null = null;

  constructor(
    private readonly channel: StateChannel,
    private readonly task: number,
  ) {}

  chunk(text: Buffer): void {
    // The struct logger's 1 MB buffers move (it writes into a new one next); a short slice of the pool is copied.
    const transfer: ArrayBuffer[] = [];
    const bytes = movableBytes(text, transfer);
    const sent = this.channel.request(this.task, { op: 'chunk', bytes }, transfer);
    const previous = this.pending;
    const done = previous ? Promise.all([previous, sent]) : sent;
    this.pending = done;
    done.then(
      () => {
        if (this.pending === done) this.pending = null;
      },
      () => undefined,
    );
  }

  ready(): Promise<void> {
    return this.pending ? this.pending.then(() => undefined) : Promise.resolve();
  }

  /** The answer still awaited, if any: the trace waits for it before its next step. */
  behind(): Promise<void> | undefined {
    return this.pending ? this.ready() : undefined;
  }
}

/**
 * The struct logs of a trace answered in one piece (a batch, a WebSocket call) in a worker: the logger's
 * 1 MB buffers are kept as they fill and move to the main thread as they are, never joined into a string here.
 */
class CollectSink implements StructLogSink {
  private readonly chunks: Buffer[] = [Buffer.from('[')];

  chunk(text: Buffer): void {
    this.chunks.push(text);
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  /** The array's JSON text, `[` to `]`, as movable bytes. */
  bytes(transfer: ArrayBuffer[]): RawBytes {
    this.chunks.push(Buffer.from(']'));
    return { rawJson: this.chunks.map((c) => movableBytes(c, transfer)) };
  }
}

/** A value Piscina moves (its buffers transferred) instead of cloning. */
function movable<T extends object>(value: T, transfer: ArrayBuffer[]): T {
  if (transfer.length === 0) return value;
  return Piscina.move({ [Piscina.transferableSymbol]: transfer, [Piscina.valueSymbol]: value } as never) as unknown as T;
}

/** The worker side of a task (evm-worker.ts), reading state over the worker's channel. */
export async function runTraceTask(task: TraceTask, channel: StateChannel): Promise<TraceReply> {
  // A worker that was still starting (or being replaced) may get a trace whose time is already up.
  if (Date.now() > task.deadline) return { kind: 'timeout' };
  const view = new RemoteStateView(channel, task.id, task.prefetch, task.deadline);
  const { stream, ...rest } = task.opts;
  const sink = stream ? new ChannelSink(channel, task.id) : undefined;
  // A single trace's struct logs answered whole: collected as bytes (a block trace's entries keep their own text).
  const single = task.job.kind === 'transaction' || task.job.kind === 'call';
  const collect = !stream && single && rest.tracer === 'structLogger' ? new CollectSink() : undefined;
  const env: BlockEnv = { ...task.env, blockHash: (h) => view.blockHash(h) };
  const site: TraceSite = {
    env,
    parentState: view,
    store: view,
    prefix: task.prefix,
    devWrites: task.devWrites,
    deadline: task.deadline,
    pace: sink ? () => sink.behind() : undefined,
  };
  try {
    const into = sink ?? collect;
    const result = await runTraceJob(task.job, site, into ? { ...rest, sink: into } : rest);
    // The last chunks travel on the state channel, the reply on Piscina's: the reply waits until they landed.
    await sink?.ready();
    const transfer: ArrayBuffer[] = [];
    const packed = collect ? { ...(result as object), structLogs: collect.bytes(transfer) } : packResult(result, transfer);
    return movable({ kind: 'result', result: packed }, transfer);
  } catch (err) {
    const e = traceError(err);
    if (e instanceof TraceTimeoutError) return { kind: 'timeout' };
    return { kind: 'error', error: errorData(e) };
  } finally {
    view.close();
  }
}
