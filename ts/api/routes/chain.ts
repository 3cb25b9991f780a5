import { DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE, blockDetail, getBlock, listBlocks } from '../../services/index.js';
import { heightParam, intParam } from '../params.js';
import type { RouteDef, RouteHandler } from '../types.js';

const blocksPage: RouteHandler = async (ctx, req) => ({
  body: await listBlocks(
    ctx,
    intParam(req.query, 'page', 0),
    Math.max(1, intParam(req.query, 'limit', DEFAULT_BLOCKS_PAGE, MAX_BLOCKS_PAGE)),
  ),
});
const blockByHeight: RouteHandler = async (ctx, _req, p) => ({ body: blockDetail(await getBlock(ctx, heightParam(p.index))) });

export const chainRoutes: RouteDef[] = [
  { method: 'GET', path: '/chain/blocks', handler: blocksPage },
  { method: 'GET', path: '/chain/blocks/:index', handler: blockByHeight },
  { method: 'GET', path: '/blocks', handler: blocksPage },
  { method: 'GET', path: '/blocks/:index', handler: blockByHeight },
];
