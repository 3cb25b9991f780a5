import { timingSafeEqual } from 'node:crypto';
import FindMyWay from 'find-my-way';
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/index.js';
import type { NodeContext } from '../services/index.js';
import { NodeError } from '../util/errors.js';
import { stringifyExact } from '../util/json.js';
import type { ApiResult, RouteDef } from './types.js';

export interface ApiOptions {
  /** NATIVE_API_KEY; undefined = no key checks. */
  apiKey?: string;
  /** NATIVE_CORS_ORIGIN: '*' or one origin; undefined = no CORS headers (same-origin only). */
  corsOrigin?: string;
  onError?: (err: unknown, req: HttpRequest) => void;
}

/** Constant-time comparison of the X-API-Key header with the configured key. */
export function apiKeyMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  if (a.length !== b.length) {
    // Still spend a comparison's time so the length mismatch is not observable.
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Translate a thrown error into the spec's REST shape. */
export function errorResult(err: unknown): ApiResult {
  if (err instanceof NodeError) {
    if (err.httpStatus === 404) return { status: 404 };
    return { status: err.httpStatus, body: { success: false, error: err.message } };
  }
  return { status: 500, body: { success: false, error: 'internal error' } };
}

/** Build the HTTP handler serving the given REST routes. */
export function createApiHandler(ctx: NodeContext, routes: RouteDef[], opts: ApiOptions = {}): HttpHandler {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 200 });
  for (const r of routes) router.on(r.method, r.path, () => undefined, r);

  const cors = (headers: Record<string, string>, req: HttpRequest): void => {
    if (!opts.corsOrigin) return;
    if (opts.corsOrigin === '*') headers['access-control-allow-origin'] = '*';
    else if (req.headers.origin === opts.corsOrigin) {
      headers['access-control-allow-origin'] = opts.corsOrigin;
      headers.vary = 'Origin';
    }
  };

  return async (req: HttpRequest): Promise<HttpResponse> => {
    const headers: Record<string, string> = {};
    cors(headers, req);
    if (req.method === 'OPTIONS') {
      if (opts.corsOrigin) {
        headers['access-control-allow-methods'] = 'GET, POST, OPTIONS';
        headers['access-control-allow-headers'] = 'Content-Type, X-API-Key';
        headers['access-control-max-age'] = '600';
      }
      return { status: 204, headers };
    }
    const found = router.find(req.method as 'GET', req.path);
    if (!found) return { status: 404, headers };
    const route = found.store as RouteDef;
    if (route.auth && opts.apiKey && !apiKeyMatches(opts.apiKey, req.headers['x-api-key'])) {
      return { status: 401, headers };
    }
    let result: ApiResult;
    try {
      result = await route.handler(ctx, req, found.params as Record<string, string>);
    } catch (err) {
      if (!(err instanceof NodeError)) opts.onError?.(err, req);
      result = errorResult(err);
    }
    Object.assign(headers, result.headers);
    if (result.raw !== undefined) return { status: result.status ?? 200, headers, body: result.raw };
    if (result.body === undefined) return { status: result.status ?? 200, headers };
    headers['content-type'] = 'application/json';
    return { status: result.status ?? 200, headers, body: stringifyExact(result.body) };
  };
}
