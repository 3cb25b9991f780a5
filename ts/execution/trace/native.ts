import type { SignedTransaction } from '../../ledger/transaction.js';
import { baseToNative, weiToBase } from '../../ledger/units.js';
import { getAccount } from '../../state/accounts.js';
import { StateOverlay, type StateReader } from '../../state/state-store.js';
import { type TraceSite, applyUntraced } from './run.js';

/** Account fields of a native trace (spec: balance_base, nonce). */
interface NativeAccountView {
  balance_base: bigint;
  nonce: bigint;
}

function accounts(state: StateReader, addresses: readonly string[]): Record<string, NativeAccountView> {
  const out: Record<string, NativeAccountView> = {};
  for (const a of addresses) {
    const acc = getAccount(state, a);
    out[a] = { balance_base: weiToBase(acc.balance), nonce: acc.nonce };
  }
  return out;
}

/**
 * native_traceTransaction of a NativeTransfer (the only native operation the chain executes today; the
 * token, staking and NFT modules are not active): the two accounts before and after, and the fee split
 * the block applies at its end (floor(fee/2) to the proposer, the rest burned). Bounded: two accounts.
 */
export async function traceNativeTransfer(site: TraceSite, tx: SignedTransaction): Promise<Record<string, unknown>> {
  const state = new StateOverlay(site.parentState);
  await applyUntraced(site.env, state, site.store, site.prefix);
  const parties = [...new Set([tx.from_address, tx.to_address])];
  const pre = accounts(state, parties);
  await applyUntraced(site.env, state, site.store, [tx]);
  const toValidator = tx.fee / 2n;
  return {
    op: 'NativeTransfer',
    txid: tx.txid,
    from: tx.from_address,
    to: tx.to_address,
    amount_base: tx.amount,
    amount_native: baseToNative(tx.amount),
    fee_base: tx.fee,
    pre_state: pre,
    post_state: accounts(state, parties),
    fee_split: { burned_base: tx.fee - toValidator, validator_base: toValidator, validator: site.env.proposer },
    events: [],
  };
}
