import { DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE, blockDetail, findBlock, getBlock, listBlocks } from '../../services/index.js';
import { isHash } from '../../util/index.js';
import { IMMUTABLE_CACHE_CONTROL, cacheAt } from '../cache.js';
import { heightParam, intParam } from '../params.js';
import { arr, int, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef, RouteHandler } from '../types.js';
import { limitParam } from './common.js';

const blocksPage: RouteHandler = async (ctx, req) => ({
  body: await listBlocks(ctx, intParam(req.query, 'page', 0), limitParam(req.query, DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE)),
});
/** A block by height or by hash (64 hex, 0x optional, as explorers' APIs take it); final blocks are cacheable for good. */
const blockByHeight: RouteHandler = async (ctx, _req, p) => {
  const b = isHash(p.index) ? await findBlock(ctx, { hash: p.index }) : await getBlock(ctx, heightParam(p.index));
  return { body: blockDetail(b), cache: cacheAt(ctx, b.index) };
};

const page = {
  tag: 'chain',
  query: S.pageQuery(DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE),
  response: obj({ blocks: arr(S.block), page: int(), limit: int(), total: int('blocks on the chain') }),
  handler: blocksPage,
};
const byHeight = {
  tag: 'chain',
  params: {
    index: str('block height, or the block hash (64 hex, 0x optional)', { pattern: '^([0-9]{1,15}|(0x)?[0-9a-fA-F]{64})$' }),
  },
  statuses: { 404: 'no block at that height or with that hash' },
  description: `A block at a finalized height is immutable: Cache-Control: ${IMMUTABLE_CACHE_CONTROL} and a strong ETag (304 on If-None-Match).`,
  response: S.blockDetail,
  handler: blockByHeight,
};

export const chainRoutes: RouteDef[] = [
  { method: 'GET', path: '/chain/blocks', summary: 'Blocks, newest first', ...page },
  { method: 'GET', path: '/chain/blocks/:index', summary: 'Block by height or hash, with its transactions', ...byHeight },
  { method: 'GET', path: '/blocks', summary: 'Alias of /chain/blocks', ...page },
  { method: 'GET', path: '/blocks/:index', summary: 'Alias of /chain/blocks/{index}', ...byHeight },
];
