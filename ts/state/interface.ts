/**
 * The contract of ts/state that other folders rely on: state keys in their string form, the synchronous
 * read side every view of the state offers, and change sets. StateStore, StateOverlay, snapshots and the
 * historical views (ts/chain) all implement StateReader.
 */

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
