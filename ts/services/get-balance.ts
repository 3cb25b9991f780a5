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
 * An account's balance in wei after block `at` (an absent account has 0). Throws NoSuchHeightError above the head,
 * NotFoundError for an unknown block hash, HistoryUnavailableError below the history the node keeps.
 */
export async function getBalance(ctx: ResolverContext, { address, at }: GetBalanceParameters): Promise<GetBalanceReturnType> {
  const height = await stateHeightOfRef(ctx, at);
  return withStateAt(ctx, height, (state) => getAccount(state, address.toLowerCase()).balance);
}
