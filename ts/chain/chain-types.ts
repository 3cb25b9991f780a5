/** The types and errors of Chain's interface (chain.ts): its events, options, executions and proposals. */
import type { ExecutionResult } from '../execution/index.js';
import type { StateOverlay, StateUndo } from '../state/index.js';
import { NodeError } from '../util/index.js';
import type { Block, ConsensusData } from './block.js';
import type { HistoryRetention } from './state-history.js';
import type { TrieCheckpointOptions } from './trie-checkpoint.js';
import type { AppliedBlock } from './validate-block.js';

/** The head moved (a block was imported) while a proposal was being executed. */
export class StaleExecutionError extends Error {}

/** A block built on the current head, validated, its state applied to the trie but not yet persisted. */
export interface Proposal extends AppliedBlock {
  timings: { executeMs: number; stateRootMs: number };
}

/** Transactions executed on top of the head, not yet applied to the state trie. */
export interface Execution {
  height: number;
  timestamp: number;
  proposer: string;
  overlay: StateOverlay;
  result: ExecutionResult;
  executeMs: number;
  /** The block's consensus data (version 2): the parent's commit certificate and included evidence. */
  consensusData: ConsensusData;
}

export interface ChainEvents {
  /** A committed block, its execution, and the undo record of its state changes (tracing keeps recent ones). */
  block: [Block, ExecutionResult | null, StateUndo];
  /** The chain was rolled back: the head is now the block at this height; the state keys the rollback changed. */
  rollback: [number, ReadonlySet<string>];
  /** A trie checkpoint of the block at this height was written (error null) or failed, after ms. */
  checkpoint: [number, Error | null, number];
  /**
   * The head block whose batch was just written: the `S` table now holds exactly its state, until the next write
   * (emitted synchronously after a commit's or an import run's write, before anything else is applied). A listener
   * that opens a RocksDB iterator here reads that block's state (state snapshots, ts/snapshot).
   */
  durable: [Block];
}

/** Options of a chain beyond its parameters. */
export interface ChainOptions {
  /** Change sets kept for reads at past heights and rollbacks (default: every block). */
  history?: HistoryRetention;
  /** Bytes of committed state values cached in memory (`--state-cache-mb`; default 256 MiB). */
  stateCacheBytes?: number;
  /** Where and how often the trie is checkpointed (restart without re-hashing the state); none by default. */
  trieCheckpoint?: TrieCheckpointOptions;
}

/** A height that is not a block of the chain (negative, or above the head). */
export class NoSuchHeightError extends NodeError {
  readonly code = 'NO_SUCH_HEIGHT';
  constructor(
    readonly height: number,
    readonly head: number,
  ) {
    super(`block ${height} does not exist (the head is ${head})`, 'NOT_FOUND');
  }
}
