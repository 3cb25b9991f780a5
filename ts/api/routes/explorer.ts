import { explorerRoutes, servePage } from '../../explorer/index.js';
import type { RouteDef } from '../types.js';

/**
 * GET /explorer/*: the built-in explorer's HTML pages (ts/explorer), each a route with its own label.
 * `onError`: a page that failed with a 500 (the node's error log).
 */
export function explorerRouteDefs(onError?: (err: unknown, path: string) => void): RouteDef[] {
  return explorerRoutes.map((r) => ({
    method: 'GET',
    path: r.path,
    tag: 'explorer',
    summary: r.summary,
    produces: r.path.endsWith('.css') ? 'text/css' : r.path.endsWith('.svg') ? 'image/svg+xml' : 'text/html',
    handler: async (ctx, req, params) => {
      const res = await servePage(ctx, r, { params, query: req.query }, (err) => onError?.(err, req.path));
      return { status: res.status, headers: res.headers, raw: res.body ?? '' };
    },
  }));
}
