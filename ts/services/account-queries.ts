import { getAccount } from '../state/accounts.js';
import { weiToBase } from '../ledger/units.js';
import type { NodeContext } from './context.js';

/** Balance in wei (JSON-RPC unit); REST divides by 1e10. */
export function getBalanceWei(ctx: NodeContext, address: string): bigint {
  return getAccount(ctx.chain.state, address.toLowerCase()).balance;
}

export function getBalanceBase(ctx: NodeContext, address: string): bigint {
  return weiToBase(getBalanceWei(ctx, address));
}

/** Committed nonce (the next nonce a block will accept). */
export function getNonce(ctx: NodeContext, address: string): bigint {
  return getAccount(ctx.chain.state, address.toLowerCase()).nonce;
}

/** Next nonce including this sender's pending transactions (what a wallet should sign next). */
export function getPendingNonce(ctx: NodeContext, address: string): bigint {
  const a = address.toLowerCase();
  return getNonce(ctx, a) + BigInt(ctx.mempool.pendingOf(a).length);
}
