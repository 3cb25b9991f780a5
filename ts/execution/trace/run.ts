import { type RunTxResult, runTx } from '@ethereumjs/vm';
import type { SignedTransaction } from '../../ledger/transaction.js';
import { accountKey, getAccount, storageKey } from '../../state/accounts.js';
import { FEE_COLLECTOR } from '../common.js';
import { StateOverlay, type StateReader } from '../../state/state-store.js';
import type { EvmBaseState } from '../state-adapter.js';
import type { VM } from '@ethereumjs/vm';
import { BLOCK_GAS_LIMIT, type BlockEnv, executeBlock } from '../block-executor.js';
import { acquireVm, releaseVm } from '../vm-pool.js';
import { type CallArgs, intrinsicGas, runAsCall } from '../call.js';
import { typedTransactionOf } from '../evm-tx.js';
import { ServerError } from '../../util/errors.js';
import { CallTracer, type MessageEvent, type MessageResult, gethError } from './call-tracer.js';
import { PrestateTracer } from './prestate-tracer.js';
import { StructLogger } from './struct-logger.js';
import { type StepEvent, TRACE_YIELD_STEPS, TraceTimeoutError, type TraceOptions } from './types.js';

/** Where a traced transaction runs: its block's environment and the state before that block. */
export interface TraceSite {
  env: BlockEnv;
  /** The state after the parent block (the head state, or a historical view of it). */
  parentState: StateReader;
  /** What the EVM adapter reads under its overlays (a contract's stored slot keys): the parent state's view. */
  store: EvmBaseState;
  /** Transactions of the block before the traced one, re-executed first. */
  prefix: readonly SignedTransaction[];
  /** Called between slices of steps (the caller waits there for a settled chain state). */
  pause?: () => Promise<void>;
}

/**
 * Apply transactions without tracing, as the block did, leaving out the end-of-block work (fee split,
 * coinbase, epochs, reward distribution), which happens after the block's last transaction. Returns the
 * EVM gas they used.
 */
export async function applyUntraced(
  env: BlockEnv,
  state: StateOverlay,
  store: EvmBaseState,
  txs: readonly SignedTransaction[],
): Promise<bigint> {
  if (txs.length === 0) return 0n;
  const r = await executeBlock(env, state, store, txs, { finish: false });
  // These transactions are in a committed block: each applied then, so each must apply again.
  const lost = r.dropped[0]?.reason ?? (r.deferred.length ? 'deferred' : null);
  if (lost) throw new ServerError(`re-execution of block ${env.height} diverged: ${lost}`);
  return r.gasUsed;
}

/** The result of a traced transaction: the selected tracer's JSON and the transaction's receipt facts. */
export interface TraceOutcome {
  result: unknown;
  gasUsed: bigint;
  failed: boolean;
  /** Bytes of struct-log JSON produced (0 for the other tracers): a block trace shares one cap. */
  outputBytes: number;
}

type Sink = {
  step(e: StepEvent, state: StateReader): void;
  enter(m: MessageEvent): void;
  exit(r: MessageResult, depth: number): void;
};

function slotValue(state: StateReader, e: StepEvent): bigint {
  const slot = Buffer.from(e.stack[e.stack.length - 1].toString(16).padStart(64, '0'), 'hex');
  const v = state.get(storageKey(e.address.bytes, slot));
  return v && v.length > 0 ? BigInt(`0x${v.toString('hex')}`) : 0n;
}

/** The selected tracer behind one interface, and how its result is finished. */
function makeSink(opts: TraceOptions, pre: StateReader, txGas: bigint) {
  if (opts.tracer === 'callTracer') {
    const t = new CallTracer(opts, txGas);
    const sink: Sink = {
      step: (e, state) =>
        t.step(e, e.opcode.name === 'SELFDESTRUCT' ? getAccount(state, e.address.toString()).balance : undefined),
      enter: (m) => t.enter(m),
      exit: (r) => t.exit(r),
    };
    return { sink, finish: (o: FinishInput) => t.result(o.gasUsed), outputBytes: () => 0 };
  }
  if (opts.tracer === 'prestateTracer') {
    const t = new PrestateTracer(pre, opts.diffMode);
    const sink: Sink = { step: (e) => t.step(e), enter: (m) => t.enter(m), exit: (r) => t.exit(r) };
    return { sink, finish: (o: FinishInput) => t.result(o.post), outputBytes: () => 0 };
  }
  const t = new StructLogger(opts);
  const sink: Sink = {
    step: (e, state) => t.step(e, e.opcode.name === 'SLOAD' ? slotValue(state, e) : undefined),
    enter: (m) => {
      if (m.depth > 0) t.messageStarted(m.gasLimit);
    },
    exit: (r, depth) => {
      t.returned(depth, r.execResult.returnValue);
      const err = r.execResult.exceptionError;
      if (err) t.fault(depth, gethError(err.error));
    },
  };
  return { sink, finish: (o: FinishInput) => t.result(o.gasUsed, o.failed, o.returnValue), outputBytes: () => t.outputBytes };
}

interface FinishInput {
  gasUsed: bigint;
  failed: boolean;
  returnValue: Uint8Array;
  post: StateReader;
}

/**
 * Attach a sink to a VM's events. Every TRACE_YIELD_STEPS steps the run yields to the event loop (the
 * node keeps serving), waits for `pause`, and stops with TraceTimeoutError once past the deadline.
 */
function attach(vm: VM, sink: Sink, state: StateReader, deadline: number, pause?: () => Promise<void>): void {
  let steps = 0;
  const depths: number[] = [];
  const events = vm.evm.events;
  if (!events) throw new Error('the EVM has no event emitter');
  // A two-argument listener: the EVM awaits `resolve`, which is how the trace yields between slices
  // (a throw here rejects that promise and ends the run: timeout, output cap).
  events.on('step', (e: StepEvent, resolve?: (v?: unknown) => void) => {
    sink.step(e, state);
    if (++steps % TRACE_YIELD_STEPS !== 0) return resolve?.();
    if (Date.now() > deadline) throw new TraceTimeoutError();
    setImmediate(() => {
      if (!pause) return resolve?.();
      pause().then(
        () => resolve?.(),
        () => resolve?.(),
      );
    });
  });
  events.on('beforeMessage', (m: MessageEvent) => {
    depths.push(m.depth + 1);
    sink.enter(m);
  });
  events.on('afterMessage', (r: MessageResult) => sink.exit(r, depths.pop() ?? 1));
}

/**
 * What the trace waits for between slices of steps: a settled chain state (the site's pause) and, when the
 * struct logs are streamed, a consumer that has taken the text produced so far (back-pressure).
 */
function pauseOf(site: TraceSite, opts: TraceOptions): (() => Promise<void>) | undefined {
  const { sink } = opts;
  if (!sink) return site.pause;
  return async () => {
    await site.pause?.();
    await sink.ready();
  };
}

/** Trace one EVM transaction on `state` (changed as the transaction changes it). */
async function traceOne(
  site: TraceSite,
  state: StateOverlay,
  blockGasUsed: bigint,
  tx: SignedTransaction,
  opts: TraceOptions,
  deadline: number,
): Promise<TraceOutcome> {
  if (Date.now() > deadline) throw new TraceTimeoutError();
  const pre = new StateOverlay(state);
  const post = new StateOverlay(pre);
  const c = await acquireVm(site.env, post, site.store);
  let r: RunTxResult;
  const typed = typedTransactionOf(tx, c.common);
  const { sink, finish, outputBytes } = makeSink(opts, pre, typed.gasLimit);
  try {
    attach(c.vm, sink, post, deadline, pauseOf(site, opts));
    r = await runTx(c.vm, { tx: typed, block: c.block, skipHardForkValidation: true, blockGasUsed });
  } finally {
    releaseVm(c);
  }
  // As the block executor: the VM's fee payment to the collector is replaced by the block's fee split.
  post.delete(accountKey(FEE_COLLECTOR));
  const failed = r.execResult.exceptionError !== undefined;
  // geth: the output when successful, the revert data when reverted, nothing on other failures.
  const reverted = r.execResult.exceptionError?.error === 'revert';
  const returnValue = failed && !reverted ? new Uint8Array(0) : r.execResult.returnValue;
  const result = finish({ gasUsed: r.totalGasSpent, failed, returnValue, post });
  // `pre` only reads through to `state`; the transaction's writes are all in `post`.
  state.absorb(post);
  return { result, gasUsed: r.totalGasSpent, failed, outputBytes: outputBytes() };
}

/** Trace one stored EVM transaction at its place in its block (after `site.prefix`). */
export async function traceTransaction(site: TraceSite, tx: SignedTransaction, opts: TraceOptions): Promise<TraceOutcome> {
  const deadline = Date.now() + opts.timeoutMs;
  const state = new StateOverlay(site.parentState);
  const gasUsed = await applyUntraced(site.env, state, site.store, site.prefix);
  return traceOne(site, state, gasUsed, tx, opts, deadline);
}

/** One entry of a block trace, as geth: the transaction hash and its result or error. */
export interface BlockTraceEntry {
  txHash: string;
  result?: unknown;
  error?: string;
}

/**
 * Trace every EVM transaction of a block in order on one state (native ones are applied, and listed
 * with an error naming native_traceTransaction). One timeout and one output cap cover the whole block.
 */
export async function traceBlockTransactions(
  site: TraceSite,
  txs: readonly SignedTransaction[],
  isEvm: (tx: SignedTransaction) => boolean,
  opts: TraceOptions,
): Promise<BlockTraceEntry[]> {
  const deadline = Date.now() + opts.timeoutMs;
  const state = new StateOverlay(site.parentState);
  let gasUsed = await applyUntraced(site.env, state, site.store, site.prefix);
  let budget = opts.outputCap;
  const out: BlockTraceEntry[] = [];
  for (const tx of txs) {
    if (!isEvm(tx)) {
      gasUsed += await applyUntraced(site.env, state, site.store, [tx]);
      out.push({ txHash: `0x${tx.txid}`, error: 'tx is not an EVM transaction' });
      continue;
    }
    const t = await traceOne(site, state, gasUsed, tx, { ...opts, outputCap: budget }, deadline);
    budget -= t.outputBytes;
    gasUsed += t.gasUsed;
    out.push({ txHash: `0x${tx.txid}`, result: t.result });
  }
  return out;
}

/**
 * debug_traceCall: trace a call as eth_call runs it (ts/execution/call.ts: intrinsic gas charged, the
 * warm set of a real transaction, no nonce or fee checks) on top of `site.parentState`.
 */
export async function traceCall(site: TraceSite, args: CallArgs, opts: TraceOptions): Promise<unknown> {
  const deadline = Date.now() + opts.timeoutMs;
  const pre = new StateOverlay(site.parentState);
  const post = new StateOverlay(pre);
  const c = await acquireVm(site.env, post, site.store);
  const intrinsic = intrinsicGas(args, c.common);
  const gasLimit = args.gas ?? BLOCK_GAS_LIMIT;
  if (gasLimit < intrinsic) {
    releaseVm(c);
    throw new ServerError(`intrinsic gas too low: have ${gasLimit}, want ${intrinsic}`);
  }
  const { sink, finish } = makeSink(opts, pre, gasLimit);
  let r: Awaited<ReturnType<typeof runAsCall>>;
  try {
    attach(c.vm, sink, post, deadline, pauseOf(site, opts));
    r = await runAsCall(c, args, gasLimit - intrinsic);
  } finally {
    releaseVm(c);
  }
  const ex = r.execResult;
  const spent = intrinsic + ex.executionGasUsed;
  const refund = ex.gasRefund ?? 0n;
  // London+: refunds are capped at a fifth of the gas used (as simulateCall).
  const gasUsed = spent - (refund < spent / 5n ? refund : spent / 5n);
  const failed = ex.exceptionError !== undefined;
  const returnValue = failed && ex.exceptionError?.error !== 'revert' ? new Uint8Array(0) : ex.returnValue;
  return finish({ gasUsed, failed, returnValue, post });
}
