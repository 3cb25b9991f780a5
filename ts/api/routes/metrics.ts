import type { RouteDef } from '../types.js';

/** GET /metrics: Prometheus text format of the node's registry (ts/metrics). */
export const metricsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/metrics',
    tag: 'ops',
    noKey: true,
    summary: 'Prometheus metrics (text format 0.0.4)',
    description: 'Node, HTTP, JSON-RPC, mempool and block production metrics plus process metrics; see docs/operations.md.',
    produces: 'text/plain; version=0.0.4; charset=utf-8',
    handler: async (ctx) => {
      const metrics = ctx.metrics;
      if (!metrics) return { status: 404 };
      return { raw: await metrics.scrape(), headers: { 'content-type': metrics.contentType } };
    },
  },
];
