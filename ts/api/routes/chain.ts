import { DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE, blockDetail, getBlock, listBlocks } from '../../services/index.js';
import { heightParam, intParam } from '../params.js';
import { arr, int, obj } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef, RouteHandler } from '../types.js';
import { limitParam } from './common.js';

const blocksPage: RouteHandler = async (ctx, req) => ({
  body: await listBlocks(ctx, intParam(req.query, 'page', 0), limitParam(req.query, DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE)),
});
const blockByHeight: RouteHandler = async (ctx, _req, p) => ({ body: blockDetail(await getBlock(ctx, heightParam(p.index))) });

const page = {
  tag: 'chain',
  query: S.pageQuery(DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE),
  response: obj({ blocks: arr(S.block), page: int(), limit: int(), total: int('blocks on the chain') }),
  handler: blocksPage,
};
const byHeight = {
  tag: 'chain',
  params: { index: S.heightParam },
  statuses: { 404: 'no block at that height' },
  response: S.blockDetail,
  handler: blockByHeight,
};

export const chainRoutes: RouteDef[] = [
  { method: 'GET', path: '/chain/blocks', summary: 'Blocks, newest first', ...page },
  { method: 'GET', path: '/chain/blocks/:index', summary: 'Block by height, with its transactions', ...byHeight },
  { method: 'GET', path: '/blocks', summary: 'Alias of /chain/blocks', ...page },
  { method: 'GET', path: '/blocks/:index', summary: 'Alias of /chain/blocks/{index}', ...byHeight },
];
