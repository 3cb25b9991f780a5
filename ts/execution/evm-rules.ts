/**
 * The stateless rules of an EVM transaction, shared by admission (eth_sendRawTransaction) and block
 * validation. A stored EVM transaction is only ever trusted through its raw signed bytes: sender,
 * recipient, value, nonce, fee cap and hash are derived from them and must equal the stored fields.
 */
import type { Common } from '@ethereumjs/common';
import { Capability, type TypedTransaction } from '@ethereumjs/tx';
import { TxRuleError, type SignedTransaction } from '../ledger/index.js';
import { objectMemo } from '../util/index.js';
import { BASE_FEE_PER_GAS, BLOCK_GAS_LIMIT } from './block-env.js';
import { decodeRawTransaction, evmToSignedTransaction, maxPricePerGas, rememberTypedTransaction } from './evm-tx.js';
import { impersonatedSender } from './impersonation.js';

/** The raw bytes are not an Ethereum transaction at all (admission answers -32602 for these). */
export class MalformedRawTransactionError extends TxRuleError {}

/**
 * Decode raw bytes into a signed, replay-protected transaction for this chain. Throws TxRuleError
 * (chain_id, signature) or MalformedRawTransactionError. `impersonation`: a dev chain's impersonated
 * transaction (impersonation.ts) is accepted; elsewhere its marker is an invalid signature.
 */
export function decodeSignedEvmTransaction(raw: Uint8Array, common: Common, impersonation = false): TypedTransaction {
  let typed: TypedTransaction;
  try {
    typed = decodeRawTransaction(raw, common);
  } catch (err) {
    const msg = (err as Error).message.split(' (')[0];
    // A well-formed transaction for another chain is a rejection like the other admission rules (-32603).
    if (msg.startsWith('invalid chain id')) throw new TxRuleError(`Invalid transaction: ${msg}`, 'chain_id');
    // EIP-7825 (osaka) caps a transaction's gas limit: a rule refusal with the cap, as geth words it.
    if (msg.includes('EIP-7825')) {
      throw new TxRuleError(
        `Invalid transaction: gas limit above the transaction gas limit cap ${common.param('maxTransactionGasLimit')}`,
        'gas',
      );
    }
    throw new MalformedRawTransactionError(`invalid raw transaction: ${msg}`, 'integrity');
  }
  if (!typed.isSigned()) throw new TxRuleError('Invalid transaction: transaction is not signed', 'signature');
  if (!impersonation && impersonatedSender(typed) !== null)
    throw new TxRuleError('Invalid transaction: invalid signature', 'signature');
  if (typed.type === 0 && !typed.supports(Capability.EIP155ReplayProtection)) {
    throw new TxRuleError('Invalid transaction: only replay-protected (EIP-155) transactions are accepted', 'chain_id');
  }
  return typed;
}

/** Gas and fee-cap rules of a decoded transaction. */
export function checkEvmGasRules(typed: TypedTransaction, blockGasLimit = BLOCK_GAS_LIMIT): void {
  if (typed.gasLimit > blockGasLimit)
    throw new TxRuleError(`Invalid transaction: exceeds block gas limit ${blockGasLimit}`, 'gas');
  const intrinsic = typed.getIntrinsicGas();
  if (typed.gasLimit < intrinsic) {
    throw new TxRuleError(`Invalid transaction: intrinsic gas too low: have ${typed.gasLimit}, want ${intrinsic}`, 'gas');
  }
  const price = maxPricePerGas(typed);
  if (price < BASE_FEE_PER_GAS) {
    throw new TxRuleError(`Invalid transaction: max fee per gas ${price} below the base fee ${BASE_FEE_PER_GAS}`, 'fee');
  }
}

/** The stored form of a freshly decoded transaction (sender recovery happens here). */
export function storedEvmTransaction(typed: TypedTransaction, raw: Uint8Array, timestamp: number): SignedTransaction {
  let tx: SignedTransaction;
  try {
    tx = evmToSignedTransaction(typed, raw, timestamp);
  } catch {
    throw new TxRuleError('Invalid transaction: invalid signature', 'signature');
  }
  rememberTypedTransaction(tx, typed);
  return tx;
}

const checked = objectMemo<SignedTransaction, true>('EVM rules checked');

/**
 * Every stateless rule of a stored EVM transaction (a block's, or one decoded from disk): the raw bytes
 * decode and verify, the stored fields equal what the bytes say, gas and fee caps hold. Runs once per
 * transaction object.
 */
export function checkStoredEvmTransaction(
  tx: SignedTransaction,
  common: Common,
  impersonation = false,
  blockGasLimit = BLOCK_GAS_LIMIT,
): void {
  if (checked.get(tx)) return;
  if (!/^[0-9a-f]*$/.test(tx.signature) || tx.signature.length % 2 !== 0) {
    throw new TxRuleError('Invalid transaction: raw EVM bytes are not hex', 'integrity');
  }
  const raw = Buffer.from(tx.signature, 'hex');
  const typed = decodeSignedEvmTransaction(raw, common, impersonation);
  const derived = storedEvmTransaction(typed, raw, tx.timestamp);
  for (const f of ['txid', 'from_address', 'to_address', 'amount', 'fee', 'nonce', 'data', 'chain_id'] as const) {
    if (derived[f] !== tx[f]) {
      throw new TxRuleError(`Invalid transaction: stored ${f} does not match the raw signed transaction`, 'integrity');
    }
  }
  checkEvmGasRules(typed, blockGasLimit);
  rememberTypedTransaction(tx, typed);
  checked.set(tx, true);
}

export const isEvmChecked = (tx: SignedTransaction): boolean => checked.get(tx) === true;

/** Mark a transaction built by storedEvmTransaction + checkEvmGasRules at admission as checked. */
export const markEvmChecked = (tx: SignedTransaction): void => checked.set(tx, true);
