import { getAccount, putAccount } from '../state/accounts.js';
import type { StateOverlay } from '../state/state-store.js';
import { checkNonceAndBalance } from './rules.js';
import type { SignedTransaction } from './transaction.js';
import { baseToWei } from './units.js';

/**
 * Re-check the stateful rules of a native transfer against the state being built and apply it.
 * Returns a reason string when the transaction cannot apply (the block skips it).
 */
export function applyNativeTransfer(state: StateOverlay, tx: SignedTransaction): string | null {
  const sender = getAccount(state, tx.from_address);
  const cost = baseToWei(tx.amount + tx.fee);
  try {
    checkNonceAndBalance(tx, sender.nonce, sender.balance, cost);
  } catch (err) {
    return (err as Error).message;
  }
  sender.balance -= cost;
  sender.nonce += 1n;
  putAccount(state, tx.from_address, sender);
  const recipient = getAccount(state, tx.to_address);
  recipient.balance += baseToWei(tx.amount);
  putAccount(state, tx.to_address, recipient);
  return null;
}
