import { getAccount, putAccount } from '../state/accounts.js';
import type { StateOverlay } from '../state/state-store.js';
import type { SignedTransaction } from './transaction.js';
import { baseToWei } from './units.js';

/**
 * Re-check the stateful rules of a native transfer against the state being built and apply it.
 * Returns a reason string when the transaction cannot apply (the block skips it).
 */
export function applyNativeTransfer(state: StateOverlay, tx: SignedTransaction): string | null {
  const sender = getAccount(state, tx.from_address);
  if (tx.nonce !== sender.nonce) return `Invalid nonce: expected ${sender.nonce}, got ${tx.nonce}`;
  const cost = baseToWei(tx.amount + tx.fee);
  if (sender.balance < cost) return 'Invalid transaction: insufficient balance';
  sender.balance -= cost;
  sender.nonce += 1n;
  putAccount(state, tx.from_address, sender);
  const recipient = getAccount(state, tx.to_address);
  recipient.balance += baseToWei(tx.amount);
  putAccount(state, tx.to_address, recipient);
  return null;
}
