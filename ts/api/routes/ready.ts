import { parseReadinessQuery, readiness } from '../../services/index.js';
import { arr, bool, int, obj, str } from '../schema.js';
import type { RouteDef } from '../types.js';

/** Readiness changes from one moment to the next: no cache may keep it. */
const NO_STORE = Object.freeze({ 'cache-control': 'no-store' });

/**
 * GET /ready: 200 when a load balancer may send this node traffic, else 503 naming each failing condition
 * (ts/services/readiness.ts). Like /health it needs no key; unlike every other route it is exempt from the
 * per-IP rate limits, so a balancer's checks (all from one address) never mark a busy node down.
 */
export const readyRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/ready',
    tag: 'ops',
    unlimited: true,
    noKey: true,
    summary: 'Readiness: synced, near the best proven peer head, recent head, database open, not draining',
    description:
      'Query parameters may tighten the node thresholds per check: max_lag_blocks, max_age (10s, 500ms), min_peers. docs/operations.md, "Readiness".',
    query: {
      max_lag_blocks: int('blocks the head may trail the best proven peer height (at most the node setting)'),
      max_age: str('largest head age: 10s, 500ms or seconds (at most the node setting)'),
      min_peers: int('fewest connected peers'),
    },
    response: obj({ ready: bool(), reasons: arr(str('name: detail of a failing condition')) }),
    statuses: { 503: 'not ready: { ready: false, reasons: [...] }' },
    handler: (ctx, req) => {
      const report = readiness(ctx, parseReadinessQuery(req.query));
      return { status: report.ready ? 200 : 503, headers: NO_STORE, body: report };
    },
  },
];
