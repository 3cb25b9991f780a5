import type { Common } from '@ethereumjs/common';
import {
  AccessList2930Tx,
  Blob4844Tx,
  EOACode7702Tx,
  FeeMarket1559Tx,
  LegacyTx,
  type TypedTransaction,
  createTxFromRLP,
} from '@ethereumjs/tx';
import { Address } from '@ethereumjs/util';
import { keccak256 } from '../crypto/index.js';
import { EVM_DATA_PREFIX, type SignedTransaction, ZERO_ADDRESS, weiToBaseCeil } from '../ledger/index.js';
import { objectMemo, toHex } from '../util/index.js';

import { PARAMS_LOADED } from './common.js';
import { impersonatedSender, withImpersonatedSender } from './impersonation.js';
import { decodeRawFields, fillCachesFromRaw } from './raw-tx.js';

export { EVM_DATA_PREFIX, isEvmTransaction } from '../ledger/index.js';

/** Highest price per gas the transaction may pay (legacy/2930: gasPrice; 1559: maxFeePerGas). */
export function maxPricePerGas(tx: TypedTransaction): bigint {
  return 'maxFeePerGas' in tx ? tx.maxFeePerGas : (tx as { gasPrice: bigint }).gasPrice;
}

/** Parse a raw signed Ethereum transaction (legacy/EIP-155, EIP-2930, EIP-1559). Throws on malformed input. */
export function decodeRawTransaction(raw: Uint8Array, common: Common): TypedTransaction {
  try {
    const opts = { common, params: PARAMS_LOADED };
    const t = decodeRawFields(raw, opts) ?? createTxFromRLP(raw, opts);
    // A dev chain's impersonated transaction names its sender in place of a signature (impersonation.ts).
    const impersonated = impersonatedSender(t);
    return impersonated === null ? t : withImpersonatedSender(raw, common, impersonated);
  } catch (err) {
    // @ethereumjs words a foreign chain id unreadably (typed: it prints a function's source; legacy: the raw v).
    const msg = (err as Error).message;
    const typed = /not matching the derived chain ID (\d+)/.exec(msg);
    const legacy = /Incompatible EIP155-based V (\d+)/.exec(msg);
    const signedFor = typed ? typed[1] : legacy ? String((BigInt(legacy[1]) - 35n) / 2n) : null;
    if (signedFor !== null) throw new Error(`invalid chain id: signed for chain ${signedFor}, this chain is ${common.chainId()}`);
    throw err;
  }
}

/**
 * The stored form of an EVM transaction (spec: SignedTransaction note on raw transactions):
 * signature = the full raw transaction hex, public_key = "", data = EVM:{gas_limit}:{calldata hex},
 * txid = the Ethereum transaction hash. amount and fee are in base units, rounded up, so the
 * mempool's pending-spend accounting never under-counts; execution uses the exact wei values.
 */
export function evmToSignedTransaction(tx: TypedTransaction, raw: Uint8Array, timestamp: number): SignedTransaction {
  fillCachesFromRaw(tx, raw);
  return {
    txid: toHex(tx.hash()),
    from_address: tx.getSenderAddress().toString(),
    to_address: tx.to ? tx.to.toString() : ZERO_ADDRESS,
    amount: weiToBaseCeil(tx.value),
    fee: weiToBaseCeil(tx.gasLimit * maxPricePerGas(tx)),
    nonce: tx.nonce,
    data: `${EVM_DATA_PREFIX}${tx.gasLimit}:${toHex(tx.data)}`,
    timestamp,
    chain_id: Number(tx.common.chainId()),
    signature: toHex(raw),
    public_key: '',
  };
}

/** The sender's address bytes, kept in a frozen transaction's own cache object (beside @ethereumjs' public key). */
type SenderCache = { senderAddress?: Uint8Array };

/**
 * getSenderAddress of every @ethereumjs transaction class, hashing the recovered public key with the crypto door
 * (the addon) and keeping the address per frozen transaction: @ethereumjs' own hashes it with its JS keccak on
 * every call (~13 µs; admission asks once, the VM again per execution). The recovery and its rules (EIP-2 low s,
 * the recovery id) stay @ethereumjs' getSenderPublicKey, with the addon's ecrecover plugged into the Common
 * (common.ts); an impersonated transaction's own getSenderAddress (impersonation.ts) still shadows this one.
 */
function senderAddress(this: TypedTransaction): Address {
  const cache = this.cache as SenderCache;
  let bytes = cache.senderAddress;
  if (!bytes) {
    const pub = this.getSenderPublicKey();
    if (pub.length !== 64) throw new Error('Expected pubKey to be of length 64');
    bytes = keccak256(pub).slice(12);
    // As @ethereumjs caches the public key: only a frozen transaction's fields cannot change afterwards.
    if (Object.isFrozen(this)) cache.senderAddress = bytes;
  }
  return new Address(bytes.slice());
}

for (const txClass of [LegacyTx, AccessList2930Tx, FeeMarket1559Tx, Blob4844Tx, EOACode7702Tx]) {
  (txClass.prototype as { getSenderAddress: () => Address }).getSenderAddress = senderAddress;
}

const decoded = objectMemo<SignedTransaction, TypedTransaction>('typed transaction');

/** The Ethereum transaction behind a stored EVM transaction (decoded once per object). */
export function typedTransactionOf(tx: SignedTransaction, common: Common): TypedTransaction {
  let t = decoded.get(tx);
  if (!t) {
    t = decodeRawTransaction(Buffer.from(tx.signature, 'hex'), common);
    decoded.set(tx, t);
  }
  return t;
}

export function rememberTypedTransaction(stored: SignedTransaction, tx: TypedTransaction): void {
  decoded.set(stored, tx);
}
