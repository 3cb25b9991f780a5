import { getAccount } from '../state/accounts.js';
import { weiToBase } from '../ledger/units.js';
import { NotFoundError, StateUnavailableError } from '../util/errors.js';
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
 * The account at the head, or after block `atHeight`. The node keeps the state at the head only, so a read
 * at an earlier height is refused with StateUnavailableError; this is the one place historical reads will
 * be served from once the state keeps history.
 */
export function accountAt(ctx: NodeContext, address: string, atHeight?: number): AccountAt {
  const a = address.toLowerCase();
  const head = ctx.chain.height;
  if (atHeight !== undefined && atHeight > head) throw new NotFoundError(`block ${atHeight} not found: the head is at ${head}`);
  if (atHeight !== undefined && atHeight < head) {
    throw new StateUnavailableError(
      `state at height ${atHeight} is not available: this node serves account state at the head (height ${head}) only`,
    );
  }
  const account = getAccount(ctx.chain.state, a);
  return {
    balanceWei: account.balance,
    nonce: account.nonce,
    pendingNonce: account.nonce + BigInt(ctx.mempool.pendingOf(a).length),
    height: head,
  };
}
