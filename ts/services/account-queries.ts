import { NoSuchHeightError } from '../chain/index.js';
import { getAccount } from '../state/index.js';
import type { ChainContext, NodeContext } from './context.js';
import { withStateAt } from './state-at.js';

/** Committed nonce (the next nonce a block will accept). */
export function getNonce(ctx: NodeContext, address: string): bigint {
  return getAccount(ctx.chain.state, address.toLowerCase()).nonce;
}

/** Next nonce including this sender's pending transactions (what a wallet should sign next). */
export function getPendingNonce(ctx: NodeContext, address: string): bigint {
  const a = address.toLowerCase();
  return getNonce(ctx, a) + BigInt(ctx.mempool.pendingOf(a).length);
}

/** An account as one read sees it: balance, nonces and the height whose state answered. */
export interface AccountAt {
  balanceWei: bigint;
  /** Nonce committed in the state of `height`. */
  nonce: bigint;
  /** Next nonce to sign: at the head, `nonce` plus the sender's pending transactions; else `nonce`. */
  pendingNonce: bigint;
  height: number;
}

/**
 * The account at the head, or after block `atHeight` (from the state history: HistoryUnavailableError when
 * older than the history the node keeps). At the head it answers without a promise (gRPC's hot path).
 */
export function accountAt(ctx: NodeContext, address: string, atHeight?: number): AccountAt | Promise<AccountAt> {
  const a = address.toLowerCase();
  const head = ctx.chain.height;
  if (atHeight !== undefined && atHeight > head) throw new NoSuchHeightError(atHeight, head);
  if (atHeight !== undefined && atHeight < head) {
    return withStateAt(ctx, atHeight, (s) => {
      const account = getAccount(s, a);
      return { balanceWei: account.balance, nonce: account.nonce, pendingNonce: account.nonce, height: atHeight };
    });
  }
  const account = getAccount(ctx.chain.state, a);
  return {
    balanceWei: account.balance,
    nonce: account.nonce,
    pendingNonce: account.nonce + BigInt(ctx.mempool.pendingOf(a).length),
    height: head,
  };
}

/** Nonce after block `height` (the head when undefined). */
export function nonceAt(ctx: ChainContext, address: string, height: number | undefined): Promise<bigint> {
  return withStateAt(ctx, height, (s) => getAccount(s, address.toLowerCase()).nonce);
}
