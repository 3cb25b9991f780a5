/**
 * The standalone service's HTTP handler: the verification routes (standaloneRoutes) through find-my-way,
 * JSON answers, CORS open to every origin (the service is public and takes no credentials, as Sourcify).
 * On the node the same table is served by the REST layer instead (ts/api/routes/verify.ts).
 */
import FindMyWay from 'find-my-way';
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/index.js';
import type { VerifyHooks, VerifyResult, VerifyRoute } from './http-common.js';
import { v1Error } from './http-common.js';
import { standaloneRoutes } from './routes.js';
import type { VerificationService } from './service.js';

const CORS = { 'access-control-allow-origin': '*' };

function toResponse(r: VerifyResult): HttpResponse {
  const headers: Record<string, string> = { ...CORS, ...r.headers };
  if (r.raw !== undefined) return { status: r.status ?? 200, headers, body: r.raw };
  if (r.body === undefined) return { status: r.status ?? 200, headers };
  headers['content-type'] = 'application/json';
  return { status: r.status ?? 200, headers, body: JSON.stringify(r.body) };
}

/** `hooks`: what this server's routes report (its own log; never shared with another server of the process). */
export function createVerifyHandler(
  svc: VerificationService,
  hooks: VerifyHooks = {},
  routes: readonly VerifyRoute[] = standaloneRoutes,
): HttpHandler {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 500 });
  for (const r of routes) router.on(r.method, r.path, () => undefined, r);
  return async (req: HttpRequest): Promise<HttpResponse> => {
    if (req.method === 'OPTIONS') {
      return {
        status: 204,
        headers: {
          ...CORS,
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': 'Content-Type',
          'access-control-max-age': '600',
        },
      };
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const found = router.find(method as 'GET', req.path);
    if (!found) return toResponse({ status: 404, body: { error: `no route ${req.method} ${req.path}` } });
    try {
      return toResponse(await (found.store as VerifyRoute).handler(svc, req, found.params as Record<string, string>, hooks));
    } catch (err) {
      return toResponse(v1Error(err, req, hooks));
    }
  };
}
