import { getAccount } from '../state/accounts.js';
import { weiToBase } from '../ledger/units.js';
import type { ChainContext, NodeContext } from './context.js';
import { withStateAt } from './state-at.js';

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

/** Balance in wei after block `height` (the head when undefined). */
export function balanceWeiAt(ctx: ChainContext, address: string, height: number | undefined): Promise<bigint> {
  return withStateAt(ctx, height, (s) => getAccount(s, address.toLowerCase()).balance);
}

/** Nonce after block `height` (the head when undefined). */
export function nonceAt(ctx: ChainContext, address: string, height: number | undefined): Promise<bigint> {
  return withStateAt(ctx, height, (s) => getAccount(s, address.toLowerCase()).nonce);
}

/** Balance in base units after block `height` (the head when undefined). */
export async function balanceBaseAt(ctx: ChainContext, address: string, height: number | undefined): Promise<bigint> {
  return weiToBase(await balanceWeiAt(ctx, address, height));
}
