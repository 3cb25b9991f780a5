import { timingSafeEqual } from 'node:crypto';
import FindMyWay from 'find-my-way';
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/index.js';
import type { NodeContext } from '../services/index.js';
import { NodeError } from '../util/errors.js';
import { stringifyExact } from '../util/json.js';
import { ClientIpResolver, type RateBucket, RateLimiter, type RateLimitOptions } from './limits.js';
import type { ApiResult, RouteDef } from './types.js';

/** Route label of requests no route matched (bounded metric cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Route label of CORS preflight requests. */
export const PREFLIGHT_ROUTE = 'preflight';
/** Longest request path copied into an auth-failure report. */
const MAX_REPORTED_PATH = 200;

export interface AuthFailure {
  ip: string;
  method: string;
  path: string;
  /** Route pattern, e.g. /tokens/:contract/transfer. */
  route: string;
  reason: 'missing' | 'wrong';
}

export interface ApiOptions {
  /** NATIVE_API_KEY; undefined = no key checks. */
  apiKey?: string;
  /** NATIVE_CORS_ORIGIN: '*' or one origin; undefined = no CORS headers (same-origin only). */
  corsOrigin?: string;
  /** Per-client rate buckets; undefined = no rate limits. */
  rateLimits?: RateLimitOptions;
  /** Proxies whose X-Forwarded-For is believed (IPs or CIDR ranges); empty = the socket peer is the client. */
  trustedProxies?: readonly string[];
  onError?: (err: unknown, req: HttpRequest) => void;
  /** A key-checked route was called without the right key (audit log, metrics). */
  onAuthFailure?: (f: AuthFailure) => void;
  /** A request was refused with 429. */
  onRateLimited?: (bucket: RateBucket, ip: string) => void;
  /** Every answered request: route pattern (or unmatched/preflight), status and handler time. */
  onResponse?: (method: string, route: string, status: number, seconds: number) => void;
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

/** The spec's 429 body. */
export function rateLimitBody(limit: number, windowSecs: number): string {
  return JSON.stringify({ error: 'rate limit exceeded', limit, window_secs: windowSecs });
}

/**
 * Build the HTTP handler serving the given REST routes. Pipeline (after the HTTP layer's concurrency cap and
 * body limit): CORS (preflight answered here), rate limits, routing (404), API key (401), the route handler.
 */
export function createApiHandler(ctx: NodeContext, routes: RouteDef[], opts: ApiOptions = {}): HttpHandler {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 200 });
  for (const r of routes) router.on(r.method, r.path, () => undefined, r);
  const limiter = opts.rateLimits ? new RateLimiter(opts.rateLimits) : null;
  const clientIp = new ClientIpResolver(opts.trustedProxies ?? []);
  const { onResponse } = opts;

  const cors = (headers: Record<string, string>, req: HttpRequest): void => {
    if (!opts.corsOrigin) return;
    if (opts.corsOrigin === '*') headers['access-control-allow-origin'] = '*';
    else {
      // The answer depends on Origin for every request, also when it is not echoed.
      headers.vary = 'Origin';
      if (req.headers.origin === opts.corsOrigin) headers['access-control-allow-origin'] = opts.corsOrigin;
    }
  };

  const handle = async (
    req: HttpRequest,
    ip: string,
    headers: Record<string, string>,
    route: RouteDef | null,
    params: object,
  ): Promise<HttpResponse> => {
    if (route === null) return { status: 404, headers };
    if (route.auth && opts.apiKey) {
      const given = req.headers['x-api-key'];
      if (!apiKeyMatches(opts.apiKey, given)) {
        opts.onAuthFailure?.({
          ip,
          method: req.method,
          path: req.path.slice(0, MAX_REPORTED_PATH),
          route: route.path,
          reason: given === undefined ? 'missing' : 'wrong',
        });
        return { status: 401, headers };
      }
    }
    let result: ApiResult;
    try {
      result = await route.handler(ctx, req, params as Record<string, string>);
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

  return async (req: HttpRequest): Promise<HttpResponse> => {
    const t0 = onResponse ? performance.now() : 0;
    const headers: Record<string, string> = {};
    cors(headers, req);
    let res: HttpResponse;
    let label: string;
    if (req.method === 'OPTIONS') {
      if (opts.corsOrigin) {
        headers['access-control-allow-methods'] = 'GET, POST, OPTIONS';
        headers['access-control-allow-headers'] = 'Content-Type, X-API-Key';
        headers['access-control-max-age'] = '600';
      }
      res = { status: 204, headers };
      label = PREFLIGHT_ROUTE;
    } else {
      const found = router.find((req.method === 'HEAD' ? 'GET' : req.method) as 'GET', req.path);
      const route = found ? (found.store as RouteDef) : null;
      label = route ? route.path : UNMATCHED_ROUTE;
      const ip = clientIp.resolve(req.ip, req.headers['x-forwarded-for']);
      const limited = limiter?.check(ip, route?.write === true);
      if (limited) {
        opts.onRateLimited?.(limited.bucket, ip);
        headers['retry-after'] = String(limited.retryAfterSecs);
        // let browser clients of an allowed origin read when to retry
        if (headers['access-control-allow-origin']) headers['access-control-expose-headers'] = 'Retry-After';
        headers['content-type'] = 'application/json';
        res = { status: 429, headers, body: rateLimitBody(limited.limit, limiter!.windowSecs) };
      } else {
        res = await handle(req, ip, headers, route, found ? found.params : {});
      }
    }
    onResponse?.(req.method, label, res.status, (performance.now() - t0) / 1000);
    return res;
  };
}
