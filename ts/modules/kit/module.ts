/**
 * A native module (the Cosmos SDK's `x/` modules are the model): everything one native feature adds to
 * the ledger, in one value the executor's dispatch table (ts/ledger/executor.ts) lists. Its operations
 * are its rows of the wire-format table, its handler map is complete (a variant without a handler is a
 * compile error), its invariants are checked by the module tests after every block and by
 * /chain/validate, its state lives under namespace bytes it owns, and its events have constant names.
 */
import type { KeyStr, StateOverlay } from '../../state/index.js';
import type { OperationCall, OperationEnv } from './context.js';
import type { NativeEvent } from './events.js';
import type { MessageOf, OperationTable } from './spec.js';

/**
 * A handler of messages `M`, declared as a method so a module's map stays assignable to the executor's
 * untyped `NativeModule` (method parameters are bivariant; the executor dispatches by variant name, so each
 * handler only ever sees its own message).
 */
export type Handler<M> = { apply(call: OperationCall<M>): void }['apply'];

/** The handler of each variant of `Ops`, each seeing its own message type. */
export type HandlerMap<Ops extends OperationTable> = {
  readonly [K in keyof Ops]: Handler<MessageOf<Ops[K]>>;
};

/** What an invariant reads: the whole state (a pass over it) and point reads. */
export interface StateScan {
  entries(): Iterable<[KeyStr, Buffer]>;
  get(key: KeyStr): Buffer | undefined;
}

/** A property of a module's state that holds after every block; `check` returns the violations (empty when it holds). */
export interface Invariant {
  /** `<module>/<property>`, e.g. `tokens/supply-equals-balances`. */
  readonly name: string;
  check(state: StateScan): string[];
}

export interface NativeModule<Ops extends OperationTable = OperationTable> {
  /** The module's name (its folder under ts/modules). */
  readonly name: string;
  /** Its rows of the wire-format table (docs/operations.md). */
  readonly operations: Ops;
  /** One handler per row; throws OperationFailed (or a subclass) to fail the transaction without effects. */
  readonly handlers: HandlerMap<Ops>;
  /** The first byte of every state key it owns (ts/ledger checks that no two modules share one). */
  readonly namespaces: readonly number[];
  /** Its event names (constants; unique across modules). */
  readonly events: Readonly<Record<string, string>>;
  /** The index terms an event of this module is listed under (e.g. `token:SRC20_…`); [] for other events. */
  indexTerms(event: NativeEvent): string[];
  /** Work at the end of every block (epochs, reward distribution, unbonding), after its transactions; absent when none. */
  endBlock?(state: StateOverlay, env: OperationEnv): void;
  /**
   * Verified double-sign evidence against `validator` for an infraction at `infractionHeight`, included in
   * the block `env` describes (the consensus layer checks the evidence; slashing slashes and tombstones).
   */
  onDoubleSign?(state: StateOverlay, validator: string, infractionHeight: number, env: OperationEnv): void;
  /** The properties of its state that hold after every block. */
  readonly invariants: readonly Invariant[];
}

/** Declare a module with its operation table's types inferred (so the handler map is checked against the rows). */
export const defineModule = <Ops extends OperationTable>(m: NativeModule<Ops>): NativeModule<Ops> => m;

/** Apply `call` with its module's handler (the executor's one cast from the untyped decoded operation). */
export function applyWith(module: NativeModule, call: OperationCall): void {
  const handler = module.handlers[call.op.name] as ((c: OperationCall) => void) | undefined;
  if (!handler) throw new Error(`module ${module.name} has no handler for ${call.op.name}`);
  handler(call);
}
