/**
 * The worker side of parallel execution (docs/evm.md "Parallel execution"): chunks of a block's EVM transactions,
 * claimed from the block's end backwards, each executed in order against the pre-block values the main thread
 * shipped, each transaction on an overlay of its own over its chunk's earlier writes, recording what it read (key
 * and value seen) and what it wrote. The
 * main thread commits a result only if every value read is still the block's value at that point, so nothing
 * here has to be right: only to say what it assumed.
 *
 * A read of a key that was not shipped answers "absent" and marks the transaction missed (it keeps running, so
 * one run finds every key it can); a missed transaction's result is never used, its missed keys are reported
 * (the main thread learns them for the next blocks) and its writes are dropped.
 */
import type { VM } from '@ethereumjs/vm';
import { runTx } from '@ethereumjs/vm';
import type { Common } from '@ethereumjs/common';
import { type KeyStr, StateOverlay, type StateReader, accountKey } from '../../state/index.js';
import type { BlockEnv } from '../block-env.js';
import { FEE_COLLECTOR, PARAMS_LOADED } from '../common.js';
import { type TypedTransaction, createTxFromRLP } from '@ethereumjs/tx';
import { Address } from '@ethereumjs/util';
import { impersonatedSender } from '../impersonation.js';
import type { EvmBaseState, EvmStateAdapter } from '../state-adapter.js';
import { createChainVm, evmBlockFor, vmKey } from '../vm-factory.js';
import { type LogTuple, PROGRESS, type SpeculationMessage, type SpeculationResult, type SpeculationTask } from './protocol.js';
import { ResultReader, ResultWriter } from './result-codec.js';

const EMPTY = new Uint8Array(0);

/** The shipped pre-block values; any other read is a miss, recorded for the transaction running. */
class ShippedState implements EvmBaseState {
  private values = new Map<KeyStr, Buffer | null>();
  /** Keys missed by the transaction running; `blind` when it asked what no key answers (a contract's slots). */
  missed = new Set<KeyStr>();
  blind = false;

  reset(values: ArrayBuffer): void {
    const map = new Map<KeyStr, Buffer | null>();
    new ResultReader(Buffer.from(values)).everyEntry((k, v) => {
      map.set(k, v);
      return true;
    });
    this.values = map;
  }

  get(key: KeyStr): Buffer | undefined {
    const v = this.values.get(key);
    if (v === undefined) {
      this.missed.add(key);
      return undefined;
    }
    return v ?? undefined;
  }

  storageKeysOf(): ReadonlySet<KeyStr> {
    this.blind = true;
    return new Set();
  }
}

/** Reads that reach past a transaction's own overlay: the state before it, value by value. */
class ReadRecorder implements StateReader {
  readonly reads = new Map<KeyStr, Buffer | undefined>();
  constructor(private readonly under: StateReader) {}

  get(key: KeyStr): Buffer | undefined {
    const v = this.under.get(key);
    if (!this.reads.has(key)) this.reads.set(key, v);
    return v;
  }
}

interface WorkerVm {
  vm: VM;
  common: Common;
  adapter: EvmStateAdapter;
}

/** One VM per chain kind in this worker, kept between blocks (creating one costs ~1 ms). */
const vms = new Map<string, WorkerVm>();
const shipped = new ShippedState();
/** BLOCKHASH: the worker has no chain; the transaction is run by the main thread. */
const blindHash = async (): Promise<Uint8Array | null> => {
  shipped.blind = true;
  return null;
};

async function workerVm(env: Omit<BlockEnv, 'blockHash'>, overlay: StateOverlay): Promise<WorkerVm> {
  const key = vmKey(env);
  let v = vms.get(key);
  if (!v) {
    v = await createChainVm(env, overlay, shipped, blindHash);
    vms.set(key, v);
  }
  return v;
}

/** The transaction with the sender its stored form names (its own getSenderAddress; decoded unfrozen for that). */
function withSender(raw: string, sender: Uint8Array, common: Common): TypedTransaction {
  const t = createTxFromRLP(Buffer.from(raw, 'hex'), { common, params: PARAMS_LOADED, freeze: false });
  const address = new Address(sender);
  Object.defineProperty(t, 'getSenderAddress', { value: () => new Address(address.bytes.slice()) });
  return t;
}

/** Results posted together (each message costs both threads a few microseconds). */
const BATCH = 8;
const END: SpeculationMessage = { kind: 'end' };

/**
 * Claims chunks of the task from the end backwards and runs each in order, posting each transaction's result on
 * the task's port; the last message is 'end'. Returns the transactions run.
 */
export async function speculate(task: SpeculationTask): Promise<number> {
  const progress = new Int32Array(task.progress);
  const writer = new ResultWriter();
  const flush = () => {
    const batch = writer.flush();
    if (batch === null) return;
    task.port.postMessage(batch, [batch]);
    // A main thread that awaits results (tests) wakes up on this.
    Atomics.add(progress, PROGRESS.POSTED, 1);
    Atomics.notify(progress, PROGRESS.POSTED);
  };
  let ran = 0;
  try {
    shipped.reset(task.values);
    const { vm, common, adapter } = await workerVm(task.env, new StateOverlay(shipped));
    const block = evmBlockFor({ ...task.env, blockHash: blindHash }, common);
    const collector = accountKey(FEE_COLLECTOR);
    const n = task.positions.length;
    for (;;) {
      const c = Atomics.add(progress, PROGRESS.CLAIMED, 1);
      const hi = n - c * task.chunk;
      // Every chunk is claimed, or the main thread has passed this one (and so every later claim: they are earlier).
      if (hi <= 0 || Atomics.load(progress, PROGRESS.MAIN) >= task.positions[hi - 1]) break;
      const lo = Math.max(0, hi - task.chunk);
      // A chunk sees its own earlier writes, never a later chunk's (run before it, but after it in the block).
      const run = new StateOverlay(shipped);
      for (let i = lo; i < hi; i++) {
        const position = task.positions[i];
        // The main thread is at or past it: it runs it itself.
        const main = Atomics.load(progress, PROGRESS.MAIN);
        if (main >= position) continue;
        ran++;
        const t0 = performance.now();
        writer.add(await runOne(task, i, vm, common, adapter, block, run, collector));
        // Results go in batches, but one at a time once the main thread is close enough to want them.
        if (writer.count >= BATCH || position - main <= 2 * task.chunk) flush();
        // Counted as they go: the main thread reads them when the block ends, maybe before this share does.
        Atomics.add(progress, PROGRESS.RAN, 1);
        Atomics.add(progress, PROGRESS.BUSY_US, Math.round((performance.now() - t0) * 1000));
      }
      flush();
    }
  } finally {
    flush();
    task.port.postMessage(END);
    Atomics.add(progress, PROGRESS.POSTED, 1);
    Atomics.notify(progress, PROGRESS.POSTED);
    task.port.close();
  }
  return ran;
}

/** One transaction of the task on its own overlay over `run`; its writes join `run` when its result is usable. */
async function runOne(
  task: SpeculationTask,
  i: number,
  vm: VM,
  common: Common,
  adapter: EvmStateAdapter,
  block: ReturnType<typeof evmBlockFor>,
  run: StateOverlay,
  collector: KeyStr,
): Promise<SpeculationResult> {
  const position = task.positions[i];
  let typed: TypedTransaction;
  try {
    typed = withSender(task.raws[i], task.senders.subarray(20 * i, 20 * i + 20), common);
  } catch {
    // Bytes that do not decode: the main thread gives the transaction its refusal.
    return { kind: 'miss', position, to: null, keys: [] };
  }
  const to = typed.to ? typed.to.toString() : null;
  // An impersonated sender with code needs the main thread's EIP-3607 exemption (block-executor.ts).
  if (task.env.devChain && impersonatedSender(typed) !== null) return { kind: 'miss', position, to, keys: [] };
  const recorder = new ReadRecorder(run);
  const own = new StateOverlay(recorder);
  adapter.rebase(own, shipped);
  shipped.missed.clear();
  shipped.blind = false;
  let outcome: SpeculationResult;
  try {
    const r = await runTx(vm, { tx: typed, block, skipHardForkValidation: true, blockGasUsed: 0n });
    // As the block executor: the VM's payment to the collector is taken back (the block splits the fee).
    own.delete(collector);
    outcome = {
      kind: 'ran',
      position,
      reads: recorder.reads,
      writes: own.changes,
      run: {
        amountSpent: r.amountSpent,
        totalGasSpent: r.totalGasSpent,
        exceptionError: r.execResult.exceptionError ? r.execResult.exceptionError.error : null,
        returnValue: r.execResult.returnValue ?? EMPTY,
        logs: (r.execResult.logs ?? []) as LogTuple[],
        createdAddress: r.createdAddress ? r.createdAddress.bytes : null,
      },
    };
  } catch (err) {
    // A refused transaction writes nothing (runTx reverts its checkpoint); anything else is the main thread's.
    outcome =
      own.changes.size === 0
        ? { kind: 'dropped', position, reads: recorder.reads, reason: (err as Error).message.split(' (')[0] }
        : { kind: 'miss', position, to, keys: [] };
  }
  if (shipped.missed.size > 0 || shipped.blind) return { kind: 'miss', position, to, keys: [...shipped.missed] };
  run.absorb(own);
  return outcome;
}
