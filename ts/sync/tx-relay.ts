import { TxRuleError, type SignedTransaction, decodeTransaction } from '../ledger/index.js';
import type { TxAdmission } from '../mempool/index.js';
import { PeerMisbehaviour } from '../network/index.js';

/**
 * A transaction gossiped by a peer (its typed encoding): admitted through the same door as API
 * submissions, with future nonces queued. A forged or undecodable transaction is the sender's fault;
 * other refusals (already known, nonce already used, pool full) are normal under gossip.
 */
export async function admitGossipedTransaction(admission: TxAdmission, bytes: Uint8Array): Promise<void> {
  let tx: SignedTransaction;
  try {
    tx = decodeTransaction(bytes);
  } catch (err) {
    throw new PeerMisbehaviour(`undecodable transaction: ${(err as Error).message}`);
  }
  try {
    if (tx.public_key === '') await admission.submitRaw(Buffer.from(tx.signature, 'hex'), 'gossip');
    else await admission.submit(tx, 'gossip');
  } catch (err) {
    if (err instanceof TxRuleError && (err.reason === 'integrity' || err.reason === 'signature'))
      throw new PeerMisbehaviour(err.message);
  }
}
