/**
 * The one balance read of every transport (viem's getBalance is the model): wei, as a bigint, at a block named the
 * block resolver's way. REST turns it into base units and gRPC into its Amount message; JSON-RPC answers it as is.
 */
import { getAccount } from '../state/index.js';
import { type BlockRef, type ResolverContext, stateHeightOfRef } from './block-resolver.js';
import { withStateAt } from './state-at.js';

export interface GetBalanceParameters {
  /** The account, 0x-prefixed (any case). */
  address: string;
  /** The block whose state answers: tag, number or hash; the head when absent. */
  at?: BlockRef;
}

/** The balance in wei. */
export type GetBalanceReturnType = bigint;

/**
 * An account's balance in wei after block `at` (an absent account has 0). At the head (no block named, `latest`,
 * `pending`, or the head's number) it answers without a promise: REST and JSON-RPC balance reads are the hottest
 * reads a node serves, and a promise per read cost ~25% of a REST balance request (bench/RESULTS.md, "Redesign
 * A/B"). Throws NoSuchHeightError above the head, NotFoundError for an unknown block hash,
 * HistoryUnavailableError below the history the node keeps.
 */
export function getBalance(
  ctx: ResolverContext,
  { address, at }: GetBalanceParameters,
): GetBalanceReturnType | Promise<GetBalanceReturnType> {
  const a = address.toLowerCase();
  if (at === undefined || at === 'latest' || at === 'pending' || at === ctx.chain.height)
    return getAccount(ctx.chain.state, a).balance;
  return stateHeightOfRef(ctx, at).then((height) => withStateAt(ctx, height, (state) => getAccount(state, a).balance));
}
