/**
 * The main thread's side of one block executed in parallel (docs/evm.md "Parallel execution"). The main thread
 * walks the block's EVM transactions from the start, as the sequential path does, while the workers speculate
 * on chunks of them claimed from the block's end backwards, against the pre-block state; they meet wherever
 * their speeds put them.
 * Transactions are committed in block order, always by the main thread (block-executor.ts asks `take` for each
 * one before running it):
 * - a worker's result that has arrived, and whose every read value is still the block's value at this point,
 *   is applied as it is (its writes, its receipt fields): by construction the sequential run would read the
 *   same values and so do the same;
 * - anything else (not arrived yet, a read that changed since, a miss) is executed by the main thread, as the
 *   sequential path would. The main thread never waits for a worker, so a fully conflicting block costs the
 *   sequential time plus the validation of results it then discards.
 * Results are taken with receiveMessageOnPort (no event-loop turn, no round trip), in their binary form
 * (result-codec.ts), decoded only when the main thread reaches their transaction.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { RunTxResult } from '@ethereumjs/vm';
import type { SignedTransaction } from '../../ledger/index.js';
import { isEvmTransaction } from '../evm-tx.js';
import type { BlockEnv } from '../block-env.js';
import type { EvmBaseState } from '../state-adapter.js';
import { type KeyStr, NS, type StateOverlay } from '../../state/index.js';
import { parallelOptions, readyWorkers, runSpeculation, startWorkers } from './pool.js';
import { PROGRESS, type SpeculatedRun, type SpeculationMessage } from './protocol.js';
import { type EncodedResult, ResultReader, ResultWriter, readBatch, readMiss } from './result-codec.js';
import { learnMisses, shippedValues } from './read-sets.js';

/** What `take` gives the executor for a transaction: a committed run, or a refusal; null: run it yourself. */
export type TakenResult = { result: RunTxResult } | { dropped: string };

/** Counters of a parallel block (bench and tests). */
export interface ParallelStats {
  committed: number;
  conflicts: number;
  misses: number;
  late: number;
  /** Main-thread milliseconds spent handing out the shares (values read and shipped) and in take(). */
  startMs: number;
  takeMs: number;
  /** Transactions the workers ran, and their busy milliseconds (all workers), as of the block's end. */
  workerRan: number;
  workerMs: number;
  /** The worker results conflicted ABANDON_AFTER times in a row: the rest ran on the main thread alone. */
  abandoned: boolean;
}

const sameBytes = (a: Uint8Array | undefined, b: Uint8Array | null): boolean =>
  a === undefined ? b === null : b !== null && Buffer.compare(a, b) === 0;

/** The fields of runTx's result the block executor reads, from a speculated run. */
function asRunTxResult(run: SpeculatedRun): RunTxResult {
  return {
    amountSpent: run.amountSpent,
    totalGasSpent: run.totalGasSpent,
    createdAddress: run.createdAddress ? { bytes: run.createdAddress } : undefined,
    execResult: {
      exceptionError: run.exceptionError === null ? undefined : { error: run.exceptionError },
      returnValue: run.returnValue,
      logs: run.logs,
    },
  } as unknown as RunTxResult;
}

const STORAGE_KEY_LENGTH = 53;
/**
 * Transactions per chunk a worker claims (from the block's end backwards). A chunk runs on one overlay, so a
 * sender's nonce chain inside it is speculated right; its first transaction sees no earlier chunk's writes.
 */
const SPECULATION_CHUNK = 16;
/** Worker results discarded in a row before a block stops using them. */
const ABANDON_AFTER = 8;
/**
 * Contracts whose transactions conflicted ABANDON_AFTER times in a row (a hot counter, an AMM pool), with the
 * height until which they count as hot (ParallelOptions.hotBlocks on): a block whose EVM transactions mostly call them runs sequentially from
 * the start, so the workers do not take a core from the main thread for results it would discard.
 */
const hotContracts = new Map<string, number>();

/** Whether most of these transactions call a hot contract at `height`. */
function mostlyHot(txs: readonly SignedTransaction[], height: number): boolean {
  if (hotContracts.size === 0) return false;
  let hot = 0;
  for (const t of txs) if ((hotContracts.get(t.to_address) ?? -1) >= height) hot++;
  return hot * 2 > txs.length;
}

/** The longest a test's main thread waits for one worker result. */
const AWAIT_LIMIT_MS = 5_000;

let lastStats: ParallelStats | null = null;

/** Counters of every block run in parallel in this process since it started (the node's /metrics). */
export interface ParallelTotals {
  blocks: number;
  abandoned: number;
  committed: number;
  conflicts: number;
  misses: number;
  late: number;
}

const totals: ParallelTotals = { blocks: 0, abandoned: 0, committed: 0, conflicts: 0, misses: 0, late: 0 };
export const parallelTotals = (): Readonly<ParallelTotals> => totals;
/** The counters of the last block that ran in parallel (bench, tests). */
export const lastParallelStats = (): ParallelStats | null => lastStats;

export class ParallelBlock {
  private readonly results = new Map<number, EncodedResult>();
  /** Workers whose last message arrived. */
  private ended = 0;
  /** Worker results discarded in a row; at ABANDON_AFTER the rest of the block runs on the main thread alone. */
  private streak: string[] = [];
  private abandoned = false;
  readonly stats: ParallelStats = {
    committed: 0,
    conflicts: 0,
    misses: 0,
    late: 0,
    startMs: 0,
    takeMs: 0,
    workerRan: 0,
    workerMs: 0,
    abandoned: false,
  };

  private constructor(
    private readonly positions: Map<SignedTransaction, number>,
    private readonly ports: MessagePort[],
    private readonly progress: Int32Array,
    private readonly awaitWorkers: boolean,
    /** Until which height the contracts of an abandoning streak count as hot. */
    private readonly hotUntil: number,
  ) {
    lastStats = this.stats;
  }

  /**
   * Starts the workers on the block (its EVM transactions past the main thread's head), or returns null where
   * the block runs sequentially: parallel execution off, fewer EVM transactions than its threshold, mostly hot
   * contracts, no worker up yet (the first such block starts them), a run with a deadline (a trace's prefix) or
   * over a remote state (a worker's view).
   */
  static start(
    env: BlockEnv,
    state: StateOverlay,
    base: EvmBaseState,
    txs: readonly SignedTransaction[],
    deadline: number | undefined,
  ): ParallelBlock | null {
    const t0 = performance.now();
    const opts = parallelOptions();
    if (opts === null || deadline !== undefined || base.fetch || base.runSync || env.height < env.evmActivationHeight)
      return null;
    const evm: number[] = [];
    for (let i = 0; i < txs.length; i++) if (isEvmTransaction(txs[i])) evm.push(i);
    if (evm.length < opts.minTxs) return null;
    // Results are found by transaction object: a block that holds one object twice (invalid anyway) runs sequentially.
    const evmTxs = evm.map((i) => txs[i]);
    if (new Set(evmTxs).size !== evm.length || (opts.hotBlocks > 0 && mostlyHot(evmTxs, env.height))) return null;
    // Workers still loading take no share: the main thread runs more itself (all of it before any is up).
    const workers = Math.min(opts.workers, readyWorkers());
    if (workers === 0) {
      startWorkers();
      return null;
    }
    // The main thread's head: shipping values for what it would reach first anyway cannot pay.
    const mainCount = Math.ceil((evm.length * opts.mainShare * 2) / (workers + 1));
    const progress = new Int32Array(new SharedArrayBuffer(PROGRESS.LENGTH * 4));
    progress[PROGRESS.MAIN] = -1;
    const positions = new Map<SignedTransaction, number>();
    const share = evm.slice(mainCount);
    const shareTxs = share.map((p) => txs[p]);
    for (let j = 0; j < share.length; j++) positions.set(shareTxs[j], share[j]);
    const { blockHash: _, ...plainEnv } = env;
    const raws = shareTxs.map((t) => t.signature);
    // The senders as the stored form names them. One that its signature does not give is dropped by the main
    // thread's stateless check before it asks for the result; later results that read its writes then conflict.
    const senderBytes = Buffer.allocUnsafeSlow(20 * shareTxs.length);
    for (let j = 0; j < shareTxs.length; j++) senderBytes.write(shareTxs[j].from_address.slice(2), 20 * j, 20, 'hex');
    const writer = new ResultWriter();
    writer.addEntries(shippedValues(state, shareTxs, base.prefetch?.bind(base)));
    const values = writer.flush() as ArrayBuffer;
    const ports: MessagePort[] = [];
    for (let w = 0; w < workers; w++) {
      const { port1, port2 } = new MessageChannel();
      ports.push(port1);
      runSpeculation(w, {
        env: plainEnv,
        positions: share,
        chunk: SPECULATION_CHUNK,
        raws,
        // Each worker its own copy; the last one takes these.
        senders: w === workers - 1 ? senderBytes : new Uint8Array(senderBytes),
        values: w === workers - 1 ? values : values.slice(0),
        port: port2,
        progress: progress.buffer as SharedArrayBuffer,
      });
    }
    const block = new ParallelBlock(positions, ports, progress, opts.awaitWorkers === true, env.height + opts.hotBlocks);
    block.stats.startMs = performance.now() - t0;
    return block;
  }

  /** Whatever the workers have sent so far. */
  private drain(): void {
    for (const port of this.ports) {
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
        const message = m.message as SpeculationMessage;
        if (message instanceof ArrayBuffer) for (const r of readBatch(message)) this.results.set(r.position, r);
        else this.ended++;
      }
    }
  }

  /**
   * The worker's result for `tx`, applied to `state` when it is still valid there; null when the caller must
   * run the transaction itself. Called in block order, right before the caller would run it.
   */
  take(tx: SignedTransaction, state: StateOverlay): TakenResult | null {
    const position = this.positions.get(tx);
    if (position === undefined || this.abandoned) return null;
    const t0 = performance.now();
    const out = this.takeAt(position, tx, state);
    this.stats.takeMs += performance.now() - t0;
    return out;
  }

  private takeAt(position: number, tx: SignedTransaction, state: StateOverlay): TakenResult | null {
    if (this.awaitWorkers) this.await(position);
    // From here on the workers skip this transaction and those before it.
    Atomics.store(this.progress, PROGRESS.MAIN, position);
    this.drain();
    const r = this.results.get(position);
    if (r === undefined) {
      this.stats.late++;
      return null;
    }
    if (r.kind === 'miss') {
      this.stats.misses++;
      const { to, keys } = readMiss(r.body);
      learnMisses(tx, to, keys);
      return null;
    }
    const reader = new ResultReader(r.body);
    let changed = '';
    const unchanged = (k: KeyStr, v: Buffer | null): boolean => {
      if (sameBytes(state.get(k), v)) return true;
      changed = k;
      return false;
    };
    if (!reader.everyEntry(unchanged)) {
      this.stats.conflicts++;
      // A contract is hot for its storage; a conflict on an account (a sender's nonce chain) is no contract's.
      this.streak.push(changed.length === STORAGE_KEY_LENGTH && changed.charCodeAt(0) === NS.storage ? tx.to_address : '');
      if (this.streak.length >= ABANDON_AFTER) this.abandon();
      return null;
    }
    this.streak = [];
    this.stats.committed++;
    if (r.kind === 'dropped') return { dropped: reader.utf8() ?? '' };
    reader.everyEntry((k, v) => {
      // Copied: a value kept in the state must not pin the whole batch it came in.
      if (v === null) state.delete(k);
      else state.set(k, Buffer.from(v));
      return true;
    });
    return { result: asRunTxResult(reader.run()) };
  }

  /**
   * Tests only (ParallelOptions.awaitWorkers): blocks until the result for `position` or every worker's end has
   * arrived, so every path is taken whatever the machine's load. Workers bump [1] and notify after each message.
   */
  private await(position: number): void {
    const until = Date.now() + AWAIT_LIMIT_MS;
    for (;;) {
      const seen = Atomics.load(this.progress, PROGRESS.POSTED);
      this.drain();
      if (this.results.has(position) || this.ended === this.ports.length || Date.now() > until) return;
      Atomics.wait(this.progress, PROGRESS.POSTED, seen, Math.max(1, until - Date.now()));
    }
  }

  /**
   * A block whose worker results keep conflicting (a hot contract) is the main thread's alone from here: the
   * workers stop, leaving the core to it, and it validates nothing more.
   */
  private abandon(): void {
    this.abandoned = true;
    this.stats.abandoned = true;
    for (const to of this.streak) if (to !== '') hotContracts.set(to, this.hotUntil);
    if (hotContracts.size > 1024) hotContracts.clear();
    Atomics.store(this.progress, PROGRESS.MAIN, 0x7fffffff);
  }

  /** The block is done: the workers stop at their next transaction. */
  close(): void {
    Atomics.store(this.progress, PROGRESS.MAIN, 0x7fffffff);
    totals.blocks++;
    if (this.stats.abandoned) totals.abandoned++;
    totals.committed += this.stats.committed;
    totals.conflicts += this.stats.conflicts;
    totals.misses += this.stats.misses;
    totals.late += this.stats.late;
    this.stats.workerRan = Atomics.load(this.progress, PROGRESS.RAN);
    this.stats.workerMs = Atomics.load(this.progress, PROGRESS.BUSY_US) / 1000;
    for (const p of this.ports) p.close();
  }
}
