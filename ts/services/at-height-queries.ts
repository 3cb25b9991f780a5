/**
 * Token and NFT reads at a past height (REST `?at_height`): the same reads as the head's, over the state
 * after that block (state-at.ts). An answer read at a finalized height never changes, so REST marks it
 * cacheable for good (api/cache.ts).
 */
import { getToken as readToken, tokenBalance as readBalance, NftReads, type TokenInfo } from '../modules/index.js';
import { NotFoundError } from '../util/index.js';
import type { ChainContext } from './context.js';
import { withStateAt } from './state-at.js';

/** GET /tokens/{contract}/balance/{address}?at_height=H: the balance after block H (404 when the token did not exist yet). */
export function tokenBalanceAt(
  ctx: ChainContext,
  contract: string,
  address: string,
  height: number,
): Promise<Record<string, unknown>> {
  return withStateAt(ctx, height, (state) => {
    const t = readToken(state, contract);
    if (!t) throw new NotFoundError('unknown token contract');
    const a = address.toLowerCase();
    return { contract: t.contract, address: a, balance: readBalance(state, contract, a), symbol: t.symbol, decimals: t.decimals };
  });
}

/** GET /nft/token/{collection}/{id}?at_height=H: the token as it was after block H, or null (not minted yet, or burned). */
export function nftTokenAt(ctx: ChainContext, collection: string, id: bigint, height: number): Promise<TokenInfo | null> {
  return withStateAt(ctx, height, (state) => new NftReads(state, height + 1).token(collection, id));
}
