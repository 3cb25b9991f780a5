/**
 * Transaction kinds. Every SignedTransaction is exactly one of these, decided once from its fields
 * (and cached per object) so admission, execution, validation, indexing and the APIs never disagree
 * about what a transaction is.
 */
import { type NativeOperation, type OperationFamily, decodeOperation } from './operations.js';
import type { SignedTransaction } from './transaction.js';
import { ZERO_ADDRESS } from '../modules/index.js';

/** Marker of EVM transactions in the spec's SignedTransaction shape: data = "EVM:{gas_limit}:{hex_calldata}". */
export const EVM_DATA_PREFIX = 'EVM:';

export type TxKind = { kind: 'transfer' } | { kind: OperationFamily; op: NativeOperation } | { kind: 'evm' };

export type TxKindName = TxKind['kind'];

/**
 * An EVM transaction is stored with an empty public key (its signature field holds the raw signed
 * bytes); a native transaction always carries a 130-hex key, so the two forms cannot be confused.
 */
export const isEvmTransaction = (tx: SignedTransaction): boolean => tx.public_key === '' && tx.data.startsWith(EVM_DATA_PREFIX);

const kinds = new WeakMap<SignedTransaction, TxKind>();

/**
 * The kind of a transaction. Native transactions with data are operations: the data must decode
 * (strictly) as one, which throws OperationDecodeError; the amount/recipient rules of each kind are
 * checked by ledger/rules.ts, not here.
 */
export function txKind(tx: SignedTransaction): TxKind {
  let k = kinds.get(tx);
  if (k) return k;
  if (isEvmTransaction(tx)) k = { kind: 'evm' };
  else if (tx.data === '') k = { kind: 'transfer' };
  else {
    const op = decodeOperation(tx.data);
    k = { kind: op.family, op };
  }
  kinds.set(tx, k);
  return k;
}

/** A native operation is addressed to the zero address (TOKEN_OP_ADDRESS) with amount 0. */
export const isOperationEnvelope = (tx: SignedTransaction): boolean => tx.to_address === ZERO_ADDRESS && tx.amount === 0n;
