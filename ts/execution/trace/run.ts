import { type RunTxResult, runTx, type VM } from '@ethereumjs/vm';
import type { SignedTransaction } from '../../ledger/index.js';
import {
  accountKey,
  codeKey,
  getAccount,
  storageKey,
  type StateChanges,
  StateOverlay,
  type StateReader,
} from '../../state/index.js';
import { FEE_COLLECTOR } from '../common.js';
import { type EvmBaseState, EvmStateAdapter } from '../state-adapter.js';
import { BLOCK_GAS_LIMIT, type BlockEnv, executeBlock } from '../block-executor.js';
import { acquireVm, releaseVm } from '../vm-pool.js';
import { type CallArgs, type CallOverrides, chargeCallGas, intrinsicGas, runAsCall } from '../call.js';
import { chainIdMismatch } from '../fees.js';
import { MaskedStorageState, OverrideError, applyStateOverrides, movePrecompiles } from '../overrides.js';
import { typedTransactionOf } from '../evm-tx.js';
import { impersonatedSender } from '../impersonation.js';
import { MissingStateError } from '../remote-state.js';
import { ServerError } from '../../util/index.js';
import { CallTracer, type MessageEvent, type MessageResult, gethError } from './call-tracer.js';
import { PrestateTracer } from './prestate-tracer.js';
import { StructLogger } from './struct-logger.js';
import { type StepEvent, TRACE_CHECK_STEPS, TraceTimeoutError, type TraceOptions, traceError } from './types.js';

/** Where a traced transaction runs: its block's environment and the state before that block. */
export interface TraceSite {
  env: BlockEnv;
  /** The state after the parent block (a historical view of it, or its remote twin in a trace worker). */
  parentState: StateReader;
  /** The same state as the EVM adapter reads it (a contract's stored slot keys, remote fetches). */
  store: EvmBaseState;
  /** Transactions of the block before the traced one, re-executed first. */
  prefix: readonly SignedTransaction[];
  /**
   * The dev chain's state writes recorded with the block (anvil_set*, hardhat_set*; chain/dev-patches.ts):
   * part of the block, applied before its first transaction as replay does.
   */
  devWrites?: StateChanges;
  /** Epoch milliseconds: past it the trace stops with TraceTimeoutError. */
  deadline: number;
  /**
   * Called after every step with the number of steps so far; the run waits for the promise it returns (a
   * yield to the event loop on the main thread, a streamed consumer that has not caught up). A rejection
   * ends the run with that error.
   */
  pace?: (steps: number) => Promise<void> | undefined;
}

/**
 * Runs `fn`, which reads the state synchronously, over `base`: in a trace worker the keys it missed are
 * fetched and it runs again (EvmBaseState.runSync), so `fn` must have no effect outside what it returns.
 */
export function runSync<T>(base: EvmBaseState, fn: () => T): Promise<T> {
  return base.runSync ? base.runSync(fn) : Promise.resolve().then(fn);
}

/** What re-applied transactions leave for the next: the block's gas and log count so far. */
interface Applied {
  gasUsed: bigint;
  logs: number;
}

/**
 * Apply transactions without tracing, as the block did, leaving out the end-of-block work (fee split,
 * coinbase, epochs, reward distribution), which happens after the block's last transaction; stops with
 * TraceTimeoutError past `deadline`. Returns the EVM gas they used and the logs they made.
 */
export async function applyUntraced(
  env: BlockEnv,
  state: StateOverlay,
  store: EvmBaseState,
  txs: readonly SignedTransaction[],
  deadline?: number,
): Promise<Applied> {
  if (txs.length === 0) return { gasUsed: 0n, logs: 0 };
  let r: Awaited<ReturnType<typeof executeBlock>>;
  try {
    r = await executeBlock(env, state, store, txs, { finish: false, deadline });
  } catch (err) {
    throw traceError(err);
  }
  // These transactions are in a committed block: each applied then, so each must apply again.
  const lost = r.dropped[0]?.reason ?? (r.deferred.length ? 'deferred' : null);
  if (lost) throw new ServerError(`re-execution of block ${env.height} diverged: ${lost}`);
  return { gasUsed: r.gasUsed, logs: r.receipts.reduce((n, rc) => n + rc.logs.length, 0) };
}

/** The state before the block's first transaction: the parent's, with the block's dev writes applied. */
export function blockStart(site: TraceSite): StateOverlay {
  const state = new StateOverlay(site.parentState);
  for (const [k, v] of site.devWrites ?? []) {
    // A record that crossed to a worker arrives as Uint8Array: the state holds Buffers.
    const value: Uint8Array | null = v;
    if (value === null) state.delete(k);
    else state.set(k, Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return state;
}

/** The result of a traced transaction: the selected tracer's JSON and the transaction's receipt facts. */
export interface TraceOutcome {
  result: unknown;
  gasUsed: bigint;
  failed: boolean;
  /** Bytes of struct-log JSON produced (0 for the other tracers): a block trace shares one cap. */
  outputBytes: number;
  /** Logs the transaction made (the next one's logs are numbered after them). */
  logs: number;
}

/**
 * The selected tracer behind one interface. `read` is what a step needs from the state (synchronous; in a
 * worker it may miss a key not fetched yet, which is fetched before the step is recorded), `step` records it.
 */
type Sink = {
  read?(e: StepEvent, state: StateReader): bigint | undefined;
  step(e: StepEvent, value: bigint | undefined): void;
  enter(m: MessageEvent): void;
  exit(r: MessageResult, depth: number): void;
};

function slotValue(state: StateReader, e: StepEvent): bigint {
  const slot = Buffer.from(e.stack[e.stack.length - 1].toString(16).padStart(64, '0'), 'hex');
  const v = state.get(storageKey(e.address.bytes, slot));
  return v && v.length > 0 ? BigInt(`0x${v.toString('hex')}`) : 0n;
}

interface FinishInput {
  gasUsed: bigint;
  failed: boolean;
  returnValue: Uint8Array;
  post: StateReader;
}

/** The byte at the step's pc in the code it runs (an op ethereumjs does not define shows as INVALID). */
function codeByte(state: StateReader, e: StepEvent): bigint | undefined {
  const b = state.get(codeKey(e.codeAddress.toString()))?.[e.pc];
  return b === undefined ? undefined : BigInt(b);
}

/** The selected tracer behind one interface, and how its result is finished. */
function makeSink(opts: TraceOptions, pre: StateReader, store: EvmBaseState, txGas: bigint, logIndexBase: number) {
  if (opts.tracer === 'callTracer') {
    const t = new CallTracer(opts, txGas, logIndexBase);
    const sink: Sink = {
      read: (e, state) => {
        const name = e.opcode.name;
        if (name === 'SELFDESTRUCT') return getAccount(state, e.address.toString()).balance;
        return name === 'INVALID' ? codeByte(state, e) : undefined;
      },
      step: (e, balance) => t.step(e, balance),
      enter: (m) => t.enter(m),
      exit: (r) => t.exit(r),
    };
    return { sink, finish: async (o: FinishInput): Promise<unknown> => t.result(o.gasUsed), outputBytes: () => 0 };
  }
  if (opts.tracer === 'prestateTracer') {
    const t = new PrestateTracer(pre, {
      diffMode: opts.diffMode,
      disableCode: opts.disableCode,
      disableStorage: opts.prestateDisableStorage,
      includeEmpty: opts.includeEmpty,
    });
    const sink: Sink = { step: (e) => t.step(e), enter: (m) => t.enter(m), exit: (r) => t.exit(r) };
    // The result reads every touched account and slot before and after: in a worker, fetched in one round trip.
    return { sink, finish: (o: FinishInput): Promise<unknown> => runSync(store, () => t.result(o.post)), outputBytes: () => 0 };
  }
  const t = new StructLogger(opts);
  const sink: Sink = {
    read: (e, state) => (e.opcode.name === 'SLOAD' ? slotValue(state, e) : undefined),
    step: (e, value) => t.step(e, value),
    enter: (m) => {
      if (m.depth > 0) t.messageStarted(m.gasLimit);
    },
    exit: (r, depth) => {
      t.returned(depth, r.execResult.returnValue);
      const err = r.execResult.exceptionError;
      if (err) t.fault(depth, gethError(err.error));
    },
  };
  const finish = async (o: FinishInput): Promise<unknown> => t.result(o.gasUsed, o.failed, o.returnValue);
  return { sink, finish, outputBytes: () => t.outputBytes };
}

/**
 * Attach a sink to a VM's events. Every TRACE_CHECK_STEPS steps the run checks its deadline (TraceTimeoutError);
 * after every step it waits for what `site.pace` returns. A step whose state read misses a key (a worker's
 * remote view) waits for the key, then is recorded. Returns the check to make once the run ended: a failure
 * met while the last step waited.
 */
function attach(vm: VM, sink: Sink, state: StateReader, site: TraceSite): () => void {
  let steps = 0;
  /** A failure while the run waited (the pace's rejection, a fetch that failed): thrown at the next step. */
  let failure: unknown = null;
  const depths: number[] = [];
  const events = vm.evm.events;
  if (!events) throw new Error('the EVM has no event emitter');
  const { deadline, pace, store } = site;
  const wait = (p: Promise<unknown>, resolve?: (v?: unknown) => void): void => {
    p.then(
      () => resolve?.(),
      (err: unknown) => {
        failure = err;
        resolve?.();
      },
    );
  };
  /** After a recorded step: the deadline every TRACE_CHECK_STEPS steps, then what the pace asks to wait for. */
  const after = (): Promise<void> | undefined => {
    if (++steps % TRACE_CHECK_STEPS === 0 && Date.now() > deadline) throw new TraceTimeoutError();
    return pace?.(steps);
  };
  // A two-argument listener: the EVM awaits `resolve`, which is how the trace waits (a throw here rejects
  // that promise and ends the run: timeout, output cap).
  events.on('step', (e: StepEvent, resolve?: (v?: unknown) => void) => {
    if (failure !== null) throw failure;
    const read = sink.read;
    let value: bigint | undefined;
    try {
      value = read?.(e, state);
    } catch (err) {
      if (!(err instanceof MissingStateError) || !read) throw err;
      // The step's value is read once its key is fetched; the EVM waits meanwhile.
      const recorded = runSync(store, () => read(e, state)).then((v) => {
        sink.step(e, v);
        return after();
      });
      return wait(recorded, resolve);
    }
    sink.step(e, value);
    const p = after();
    if (p) wait(p, resolve);
    else resolve?.();
  });
  events.on('beforeMessage', (m: MessageEvent) => {
    depths.push(m.depth + 1);
    sink.enter(m);
  });
  events.on('afterMessage', (r: MessageResult) => sink.exit(r, depths.pop() ?? 1));
  return () => {
    if (failure !== null) throw failure;
  };
}

/** Trace one EVM transaction on `state` (changed as the transaction changes it). */
async function traceOne(
  site: TraceSite,
  state: StateOverlay,
  before: Applied,
  tx: SignedTransaction,
  opts: TraceOptions,
): Promise<TraceOutcome> {
  if (Date.now() > site.deadline) throw new TraceTimeoutError();
  const pre = new StateOverlay(state);
  const post = new StateOverlay(pre);
  const c = await acquireVm(site.env, post, site.store);
  let r: RunTxResult;
  const typed = typedTransactionOf(tx, c.common);
  const { sink, finish, outputBytes } = makeSink(opts, pre, site.store, typed.gasLimit, before.logs);
  try {
    c.guard.deadline = site.deadline;
    const ended = attach(c.vm, sink, post, site);
    // As the block executor: the dev chain skips EIP-3607 for impersonated senders.
    if (site.env.devChain && impersonatedSender(typed) !== null) c.adapter.hideSenderCode(typed.getSenderAddress().bytes);
    r = await runTx(c.vm, { tx: typed, block: c.block, skipHardForkValidation: true, blockGasUsed: before.gasUsed });
    ended();
  } catch (err) {
    throw traceError(err);
  } finally {
    c.adapter.hideSenderCode(null);
    releaseVm(c);
  }
  // As the block executor: the VM's fee payment to the collector is replaced by the block's fee split.
  post.delete(accountKey(FEE_COLLECTOR));
  const failed = r.execResult.exceptionError !== undefined;
  // geth: the output when successful, the revert data when reverted, nothing on other failures.
  const reverted = r.execResult.exceptionError?.error === 'revert';
  const returnValue = failed && !reverted ? new Uint8Array(0) : r.execResult.returnValue;
  const result = await finish({ gasUsed: r.totalGasSpent, failed, returnValue, post });
  // `pre` only reads through to `state`; the transaction's writes are all in `post`.
  state.absorb(post);
  const logs = r.execResult.logs?.length ?? 0;
  return { result, gasUsed: r.totalGasSpent, failed, outputBytes: outputBytes(), logs };
}

/** Trace one stored EVM transaction at its place in its block (after `site.prefix`). */
export async function traceTransaction(site: TraceSite, tx: SignedTransaction, opts: TraceOptions): Promise<TraceOutcome> {
  const state = blockStart(site);
  const before = await applyUntraced(site.env, state, site.store, site.prefix, site.deadline);
  return traceOne(site, state, before, tx, opts);
}

/** One entry of a block trace, as geth: the transaction hash and its result or error. */
export interface BlockTraceEntry {
  txHash: string;
  result?: unknown;
  error?: string;
}

/**
 * Trace every EVM transaction of a block in order on one state (native ones are applied, and listed
 * with an error naming native_traceTransaction; `evm[i]` says which). One timeout and one output cap cover
 * the whole block.
 */
export async function traceBlockTransactions(
  site: TraceSite,
  txs: readonly SignedTransaction[],
  evm: readonly boolean[],
  opts: TraceOptions,
): Promise<BlockTraceEntry[]> {
  const state = blockStart(site);
  const block = await applyUntraced(site.env, state, site.store, site.prefix, site.deadline);
  let budget = opts.outputCap;
  const out: BlockTraceEntry[] = [];
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i];
    if (!evm[i]) {
      const applied = await applyUntraced(site.env, state, site.store, [tx], site.deadline);
      block.gasUsed += applied.gasUsed;
      block.logs += applied.logs;
      out.push({ txHash: `0x${tx.txid}`, error: 'tx is not an EVM transaction' });
      continue;
    }
    const t = await traceOne(site, state, { ...block }, tx, { ...opts, outputCap: budget });
    budget -= t.outputBytes;
    block.gasUsed += t.gasUsed;
    block.logs += t.logs;
    out.push({ txHash: `0x${tx.txid}`, result: t.result });
  }
  return out;
}

/**
 * debug_traceCall: trace a call as eth_call runs it (ts/execution/call.ts: intrinsic gas charged, the
 * warm set of a real transaction, no nonce or fee checks) on top of `site.parentState`.
 */
export async function traceCall(
  site: TraceSite,
  args: CallArgs,
  opts: TraceOptions,
  overrides: CallOverrides = {},
): Promise<unknown> {
  // State overrides are the state before the call (geth applies them first): written into `pre`, the
  // prestate tracer's view, over a base that hides the storage `state` overrides replace.
  const store = overrides.state ? new MaskedStorageState(site.store) : site.store;
  const pre = new StateOverlay(overrides.state ? store : site.parentState);
  const post = new StateOverlay(pre);
  const c = await acquireVm(site.env, post, store);
  const gasLimit = args.gas ?? BLOCK_GAS_LIMIT;
  let intrinsic: bigint;
  try {
    if (overrides.state) {
      movePrecompiles(c.vm, overrides.state);
      await applyStateOverrides(new EvmStateAdapter(pre, store), pre, store as MaskedStorageState, overrides.state);
    }
    const feeFailure = chainIdMismatch(args, site.env.chainId) ?? (await chargeCallGas(c, args, gasLimit));
    if (feeFailure) throw new ServerError(feeFailure);
    intrinsic = intrinsicGas(args, c.common);
    if (gasLimit < intrinsic) throw new ServerError(`intrinsic gas too low: have ${gasLimit}, want ${intrinsic}`);
  } catch (err) {
    releaseVm(c);
    if (err instanceof OverrideError) throw new ServerError(err.message);
    throw err;
  }
  const { sink, finish } = makeSink(opts, pre, store, gasLimit, 0);
  let r: Awaited<ReturnType<typeof runAsCall>>;
  try {
    c.guard.deadline = site.deadline;
    const ended = attach(c.vm, sink, post, site);
    r = await runAsCall(c, args, gasLimit - intrinsic);
    ended();
  } catch (err) {
    throw traceError(err);
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
