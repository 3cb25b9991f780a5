import { RLP } from '@ethereumjs/rlp';
import {
  type SignedTransaction,
  TX_TYPE_EVM,
  TX_TYPE_NATIVE,
  type TxRule,
  TxRuleError,
  decodeTransaction,
  transactionFields,
} from '../ledger/index.js';
import type { TxAdmission } from '../mempool/index.js';
import { PeerMisbehaviour } from '../network/index.js';
import { InvalidParamsError } from '../util/index.js';

/**
 * Rules a transaction breaks the same way on every node, whatever its state or clock: an honest peer,
 * which relays only what it admitted, never sends one, so the peer that did is penalized (REJECT). A
 * refusal by any other rule (nonce used, balance, pool full, duplicate, timestamp ahead, not active yet)
 * may be this node's view only: the transaction is dropped here, its sender not blamed (IGNORE).
 */
const STATELESS_RULES = new Set<TxRule>(['chain_id', 'integrity', 'signature', 'amount', 'fee', 'data', 'gas']);

/**
 * A transaction gossiped by a peer (its typed encoding): admitted through the same door as API
 * submissions, with future nonces queued. Resolves 'accept' when it entered the pool (pending or queued),
 * 'ignore' when a state rule refused it; throws PeerMisbehaviour when it is undecodable, not in its
 * canonical encoding, or breaks a stateless rule (the fee before the signature is checked, for one).
 */
export async function admitGossipedTransaction(admission: TxAdmission, bytes: Uint8Array): Promise<'accept' | 'ignore'> {
  let tx: SignedTransaction;
  try {
    tx = decodeTransaction(bytes);
  } catch (err) {
    throw new PeerMisbehaviour(`undecodable transaction: ${(err as Error).message}`);
  }
  // One transaction, one encoding: a re-encoded variant would travel as a new gossip message.
  const type = tx.public_key === '' ? TX_TYPE_EVM : TX_TYPE_NATIVE;
  if (bytes[0] !== type || !Buffer.from(RLP.encode(transactionFields(tx))).equals(bytes.subarray(1)))
    throw new PeerMisbehaviour('a transaction not in its canonical encoding');
  try {
    if (tx.public_key === '') await admission.submitRaw(Buffer.from(tx.signature, 'hex'), 'gossip');
    else await admission.submit(tx, 'gossip');
    return 'accept';
  } catch (err) {
    if (err instanceof TxRuleError && STATELESS_RULES.has(err.reason)) throw new PeerMisbehaviour(err.message);
    if (err instanceof InvalidParamsError) throw new PeerMisbehaviour(`malformed EVM transaction: ${err.message}`);
    return 'ignore';
  }
}
