/**
 * The contract of ts/state that other folders rely on: state keys in their string form, the synchronous
 * read side every view of the state offers, and change sets. StateStore, StateOverlay, snapshots and the
 * historical views (ts/chain) all implement StateReader.
 */
import type { StateSnapshot } from './snapshots.js';
import type { StateProof } from './trie.js';

/** Map keys are the state key bytes as latin1 strings (cheap, exact, hashable). */
export type KeyStr = string;

/**
 * Read side shared by the committed state and overlays. Consumers: ts/ledger (native transactions and
 * operations), ts/execution (the EVM's state adapter), ts/chain (block validation, state history), ts/services
 * (queries at a height).
 */
export interface StateReader {
  get(key: KeyStr): Buffer | undefined;
}

/** A set of changes: a value, or null for a deletion. Consumers: ts/chain (block commits), ts/dev (state writes). */
export type StateChanges = Map<KeyStr, Buffer | null>;

/** Undo record of applyChanges: previous value of every changed key (undefined = was absent). Consumer: ts/chain. */
export type StateUndo = Map<KeyStr, Buffer | undefined>;

/**
 * The head's committed state as the query layer reads it (StateStore implements it): reads, a view that stays put
 * while blocks land, and Merkle proofs. Nothing here writes. Consumer: ts/services through ChainReader.state.
 */
export interface HeadStateReader extends StateReader {
  /**
   * A view of the state now, unchanged while later blocks are applied; release() it when done. Consumers:
   * eth_call/eth_estimateGas and eth_simulateV1 at the head (services/evm-queries.ts, simulate-queries.ts).
   */
  snapshot(): StateSnapshot;
  /** The Merkle proof of a key's value, or null when absent. Consumer: GET /proof/* (services/proof-queries.ts). */
  prove(key: Buffer): StateProof | null;
}
