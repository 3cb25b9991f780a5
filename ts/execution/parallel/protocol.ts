/**
 * What the main thread and a speculation worker exchange for one block (docs/evm.md "Parallel execution"):
 * the task (the block's environment, a contiguous run of its EVM transactions, the pre-block values they are
 * expected to read) and, per transaction, a result streamed back on the task's own port as soon as it is
 * known, so the main thread takes what is there without waiting or yielding (receiveMessageOnPort).
 */
import type { MessagePort } from 'node:worker_threads';
import type { KeyStr } from '../../state/index.js';
import type { BlockEnv } from '../block-env.js';

/** Key of the message a speculation worker sends its task port in, when it loads (worker.ts). */
export const PARALLEL_PORT = 'parallelSpeculationPort';

/** A pre-block value shipped to the worker (null: absent). */
export type ShippedValue = [KeyStr, Uint8Array | null];

export interface SpeculationTask {
  /** The block's environment without its BLOCKHASH callback (a BLOCKHASH read is a miss: see speculate.ts). */
  env: Omit<BlockEnv, 'blockHash'>;
  /** Block positions of the transactions, ascending. */
  positions: number[];
  /** Their raw Ethereum bytes (the stored form's `signature`), same order. */
  raws: string[];
  /** Their senders (20 bytes each), as the main thread recovered them: the worker does not recover them again. */
  senders: Uint8Array[];
  /** Pre-block values: everything the worker may read. A read of any other key is a miss. */
  values: ShippedValue[];
  /** Where the results go, one message per transaction. */
  port: MessagePort;
  /**
   * Int32 [0]: the block position the main thread is at; the worker skips what the main thread has reached (its
   * result could no longer be used). Int32 [1]: messages posted, bumped and notified after each (session.ts await).
   */
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
  reads: ShippedValue[];
}

export type SpeculationResult =
  /** runTx finished: the writes to apply, in the order the transaction made them. */
  | (Ran & { kind: 'ran'; run: SpeculatedRun; writes: ShippedValue[] })
  /** runTx refused the transaction (a nonce, a balance): the block drops it with this reason. */
  | (Ran & { kind: 'dropped'; reason: string })
  /**
   * The transaction read what the worker was not given (or cannot answer: BLOCKHASH, a contract's whole
   * storage): the main thread runs it. `keys` are the missed state keys, learned for the next blocks.
   */
  | { kind: 'miss'; position: number; to: string | null; keys: KeyStr[] }
  /** The worker's last message for the task. */
  | { kind: 'end'; position: -1 };
