/**
 * Execution of native transactions: transfers and native operations. The nonce, fee and balance rule
 * is checked against the state being built; operations then run through their family's module
 * (tokens, staking, NFTs) inside a sub-transaction of the overlay (StateOverlay.begin), so a failed
 * operation leaves nothing but its fee.
 */
import {
  type NativeEvent,
  type NativeModule,
  OperationFailed,
  type OperationEnv,
  type StateScan,
  applyWith,
  nftModule,
  stakingModule,
  tokensModule,
  baseToWei,
} from '../modules/index.js';
import { NS, StateOverlay, type StateReader, getAccount, putAccount } from '../state/index.js';
import type { OperationName } from './operations.js';
import { checkNonceAndBalance } from './rules.js';
import type { SignedTransaction } from './transaction.js';
import { txKind } from './tx-kind.js';

/**
 * The one dispatch table: every native module, in the order their end-of-block work runs. Adding a module
 * is adding it here (its operations join the wire-format table through ledger/operations.ts).
 */
export const NATIVE_MODULES: readonly NativeModule[] = [tokensModule, stakingModule, nftModule];

/** The module of each operation, and a check at load that no two modules claim a variant or a namespace byte. */
const MODULE_OF = new Map<string, NativeModule>();
{
  const owners = new Map<number, string>();
  for (const m of NATIVE_MODULES) {
    for (const op of Object.keys(m.operations)) {
      if (MODULE_OF.has(op)) throw new Error(`operation ${op} claimed by ${MODULE_OF.get(op)?.name} and ${m.name}`);
      MODULE_OF.set(op, m);
    }
    for (const ns of m.namespaces) {
      if (owners.has(ns)) throw new Error(`state namespace 0x${ns.toString(16)} claimed by ${owners.get(ns)} and ${m.name}`);
      owners.set(ns, m.name);
    }
  }
}

/** The module that applies `operation`. */
export function moduleOf(operation: OperationName): NativeModule {
  const m = MODULE_OF.get(operation);
  if (!m) throw new Error(`no module applies ${operation}`);
  return m;
}

/** How a native transaction applied. */
export type NativeOutcome =
  /** It cannot be included (nonce or balance): the block skips it and the pool drops it. */
  | { dropped: string }
  /** Included: status 1 with its events, or status 0 with the reason its operation failed (fee charged). */
  | { status: 1; events: NativeEvent[] }
  | { status: 0; events: []; failure: string };

/**
 * Apply a native transaction to the state being built: nonce and balance (amount + fee) first, then
 * the transfer or the operation. Fees are the caller's business (it splits them).
 */
export function applyNativeTransaction(state: StateOverlay, tx: SignedTransaction, env: OperationEnv): NativeOutcome {
  const sender = getAccount(state, tx.from_address);
  const cost = baseToWei(tx.amount + tx.fee);
  try {
    checkNonceAndBalance(tx, sender.nonce, sender.balance, cost);
  } catch (err) {
    return { dropped: (err as Error).message };
  }
  sender.balance -= cost;
  sender.nonce += 1n;
  putAccount(state, tx.from_address, sender);
  const kind = txKind(tx);
  if (kind.kind === 'transfer') {
    const recipient = getAccount(state, tx.to_address);
    recipient.balance += baseToWei(tx.amount);
    putAccount(state, tx.to_address, recipient);
    return { status: 1, events: [] };
  }
  if (kind.kind === 'evm') return { dropped: 'EVM transaction in native form' };
  // The operation writes into the block's overlay inside a sub-transaction; a failure rolls it back.
  const events: NativeEvent[] = [];
  const mark = state.begin();
  try {
    applyWith(moduleOf(kind.op.name), { state, tx, op: kind.op, env, emit: (e) => events.push(e) });
  } catch (err) {
    state.rollback(mark);
    if (err instanceof OperationFailed) return { status: 0, events: [], failure: err.message };
    throw err;
  }
  state.keep();
  return { status: 1, events };
}

/**
 * Would this operation apply now? Admission runs it (and the sender's pending transactions before it,
 * in nonce order) on a throwaway overlay, so a failure known at submission is a 400 with the
 * operation's reason instead of a failed transaction that still costs its fee. Returns the reason, or null.
 */
export function operationFailure(
  base: StateReader,
  pendingBefore: readonly SignedTransaction[],
  tx: SignedTransaction,
  env: OperationEnv,
): string | null {
  const scratch = new StateOverlay(base);
  for (const p of pendingBefore) applyNativeTransaction(scratch, p, env);
  const outcome = applyNativeTransaction(scratch, tx, env);
  if ('dropped' in outcome) return null; // nonce and balance are the pool's rules, reported by it
  return outcome.status === 0 ? outcome.failure : null;
}

/** End-of-block work of every module (epochs, reward distribution, unbonding), in a fixed order. */
export function endBlock(state: StateOverlay, env: OperationEnv): void {
  for (const m of NATIVE_MODULES) m.endBlock?.(state, env);
}

/**
 * Apply verified double-sign evidence included in a block: the staking module slashes the validator's
 * stake (and its delegators') and tombstones it. Before staking runs there is no stake to slash.
 */
export function applyDoubleSign(state: StateOverlay, validator: string, infractionHeight: number, env: OperationEnv): void {
  for (const m of NATIVE_MODULES) m.onDoubleSign?.(state, validator, infractionHeight, env);
}

/** Index terms of an event (every module is asked; event names are unique across families). */
export function eventIndexTerms(event: NativeEvent): string[] {
  const terms: string[] = [];
  for (const m of NATIVE_MODULES) for (const t of m.indexTerms(event)) terms.push(t);
  return terms;
}

/** Every module's invariants over a whole state: `<invariant>: <violation>` lines, empty when all hold (tests, /chain/validate). */
export function invariantViolations(state: StateScan): string[] {
  const bad: string[] = [];
  for (const m of NATIVE_MODULES) for (const inv of m.invariants) for (const v of inv.check(state)) bad.push(`${inv.name}: ${v}`);
  return bad;
}
