/**
 * What the main thread and a speculation worker exchange for one block (docs/evm.md "Parallel execution"):
 * the task (the block's environment, its EVM transactions past the main thread's head, the pre-block values they
 * are expected to read) and the results, streamed back on the task's own port in batches as they are known, so the
 * main thread takes what is there without waiting or yielding (receiveMessageOnPort).
 */
import type { MessagePort } from 'node:worker_threads';
import type { KeyStr } from '../../state/index.js';
import type { BlockEnv } from '../block-env.js';

/** Key of the message a speculation worker sends its task port in, when it loads (worker.ts). */
export const PARALLEL_PORT = 'parallelSpeculationPort';

/** State values by key, as a worker read or wrote them (null or undefined: absent). */
export type StateEntries = ReadonlyMap<KeyStr, Uint8Array | null | undefined>;

/**
 * Int32 slots of a block's shared progress array (SpeculationTask.progress):
 * - MAIN: the block position the main thread is at; workers skip what it has reached (a result could no longer
 *   be used), and stop once it has passed a whole chunk (every chunk still unclaimed is earlier);
 * - POSTED: messages posted, bumped and notified after each (session.ts await, tests);
 * - CLAIMED: chunks claimed so far, the next one's index (Atomics.add by each worker);
 * - RAN, BUSY_US: transactions the workers ran and their busy microseconds (stats).
 */
export const PROGRESS = { MAIN: 0, POSTED: 1, CLAIMED: 2, RAN: 3, BUSY_US: 4, LENGTH: 5 } as const;

export interface SpeculationTask {
  /** The block's environment without its BLOCKHASH callback (a BLOCKHASH read is a miss: see speculate.ts). */
  env: Omit<BlockEnv, 'blockHash'>;
  /**
   * Block positions of the transactions, ascending. Every worker of a block is given all of them; they claim
   * chunks of `chunk` transactions from the end backwards (the main thread walks from the start forwards, so
   * the two meet wherever their speeds put them), each chunk run in order on a fresh overlay.
   */
  positions: number[];
  chunk: number;
  /** Their raw Ethereum bytes (the stored form's `signature`), same order. */
  raws: string[];
  /**
   * Their senders (20 bytes each, one after the other), as their stored form names them (the main thread's
   * stateless check drops a transaction whose signature says otherwise): the worker does not recover them.
   */
  senders: Uint8Array;
  /**
   * Pre-block values: everything the worker may read (a read of any other key is a miss), as entries in the
   * results' binary form (result-codec.ts), transferred.
   */
  values: ArrayBuffer;
  /** Where the results go, one message per transaction. */
  port: MessagePort;
  /** The block's progress slots (PROGRESS). */
  progress: SharedArrayBuffer;
}

/** A log as the VM hands it over: [address, topics, data]. */
export type LogTuple = [Uint8Array, Uint8Array[], Uint8Array];

/** The outcome of runTx, as much of it as the block executor reads. */
export interface SpeculatedRun {
  amountSpent: bigint;
  totalGasSpent: bigint;
  /** The EVM error's text, when the transaction failed (status 0). */
  exceptionError: string | null;
  returnValue: Uint8Array;
  logs: LogTuple[];
  createdAddress: Uint8Array | null;
}

/** A transaction run against the values it read: valid iff each value is still what the block's state holds. */
interface Ran {
  position: number;
  /** Every key the transaction read from the state before it (not its own writes), with the value it saw. */
  reads: StateEntries;
}

export type SpeculationResult =
  /** runTx finished: the writes to apply, in the order the transaction made them. */
  | (Ran & { kind: 'ran'; run: SpeculatedRun; writes: StateEntries })
  /** runTx refused the transaction (a nonce, a balance): the block drops it with this reason. */
  | (Ran & { kind: 'dropped'; reason: string })
  /**
   * The transaction read what the worker was not given (or cannot answer: BLOCKHASH, a contract's whole
   * storage): the main thread runs it. `keys` are the missed state keys, learned for the next blocks.
   */
  | { kind: 'miss'; position: number; to: string | null; keys: KeyStr[] };

/**
 * What a worker posts on a task's port: results in their binary form (result-codec.ts), several at a time, and
 * at last 'end'.
 */
export type SpeculationMessage = ArrayBuffer | { kind: 'end' };
