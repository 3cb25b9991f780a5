import { type VerifyHooks, type VerifyRoute, verifyRoutes } from '../../verify/index.js';
import type { RouteDef } from '../types.js';

/** Answer of a verification route on a node started without the service (contexts built without ts/node). */
const UNAVAILABLE = { status: 503, body: { error: 'the verification service is not running on this node' } };

function adapt(r: VerifyRoute, hooks: VerifyHooks): RouteDef {
  return {
    method: r.method,
    path: r.path,
    tag: 'verification',
    summary: r.summary,
    description: 'Sourcify-compatible contract verification (docs/verification.md); no API key.',
    handler: (ctx, req, params) => (ctx.verification ? r.handler(ctx.verification, req, params, hooks) : UNAVAILABLE),
  };
}

/**
 * The contract verification service on the node's port: the spec's paths (POST /verify, GET /files/any/...,
 * GET /chains, ...), Sourcify's API v2 and the same under /sourcify for Hardhat and Foundry (ts/verify).
 */
export function verifyApiRoutes(hooks: VerifyHooks = {}): RouteDef[] {
  return verifyRoutes.map((r) => adapt(r, hooks));
}
