import { timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import FindMyWay from 'find-my-way';
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/index.js';
import type { NodeContext } from '../services/index.js';
import { BeforeEarliestBlockError, NodeError, stringifyExact } from '../util/index.js';
import type { ApiKeyRegistry } from './api-keys.js';
import { IMMUTABLE_CACHE_CONTROL, NO_STORE, etagMatches, etagOf } from './cache.js';
import { type KeyHooks, UNKNOWN_KEY_LABEL, judgeKeyed, lookupKey } from './key-gate.js';
import { httpStatusOf } from './error-status.js';
import { ClientIpResolver, type RateBucket, RateLimiter, type RateLimitOptions } from './limits.js';
import type { ApiResult, RouteDef } from './types.js';

/** Route label of requests no route matched (bounded metric cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Route label of CORS preflight requests. */
export const PREFLIGHT_ROUTE = 'preflight';
/** Longest request path copied into an auth-failure report. */
const MAX_REPORTED_PATH = 200;
/** Reported instead of a path that carries a key (`POST /rpc/<key>`). */
const KEY_IN_PATH = '/rpc/<key>';

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
  /** A limiter shared with other entrances (the WebSocket endpoint); wins over `rateLimits`. */
  limiter?: RateLimiter | null;
  /** Proxies whose X-Forwarded-For is believed (IPs or CIDR ranges); empty = the socket peer is the client. */
  trustedProxies?: readonly string[];
  onError?: (err: unknown, req: HttpRequest) => void;
  /** A key-checked route was called without the right key (audit log, metrics). */
  onAuthFailure?: (f: AuthFailure) => void;
  /** A request was refused with 429. */
  onRateLimited?: (bucket: RateBucket, ip: string) => void;
  /** Every answered request: route pattern (or unmatched/preflight), status and handler time. */
  onResponse?: (method: string, route: string, status: number, seconds: number) => void;
  /** Per-key quotas (`--api-keys`); absent = per-IP rules for every request. */
  apiKeys?: ApiKeyRegistry | null;
  /** Metrics of keyed requests. */
  keyHooks?: KeyHooks;
}

/**
 * The request headers the API reads, for the HTTP layer (HttpServerOptions.requestHeaders). Behind trusted
 * proxies every header is copied, so repeated X-Forwarded-For lines are joined and read from the right.
 */
export function apiRequestHeaders(
  opts: Pick<ApiOptions, 'trustedProxies' | 'corsOrigin' | 'apiKey'> & { apiKeysFile?: string },
): readonly string[] | undefined {
  if (opts.trustedProxies && opts.trustedProxies.length > 0) return undefined;
  const names: string[] = [];
  // Any origin ('*') is answered the same whatever Origin says: the header is not read.
  if (opts.corsOrigin && opts.corsOrigin !== '*') names.push('origin');
  if (opts.apiKey || opts.apiKeysFile) names.push('x-api-key');
  // Validators (ETags) of cacheable answers.
  names.push('if-none-match');
  return names;
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
    const status = httpStatusOf(err);
    if (status === 404 && !(err instanceof BeforeEarliestBlockError)) return { status: 404 };
    return { status, body: { success: false, error: err.message } };
  }
  return { status: 500, body: { success: false, error: 'internal error' } };
}

/** The rate limiter for these limits; null when both are off (it would read every client's address for nothing). */
export function createLimiter(rl: RateLimitOptions | undefined): RateLimiter | null {
  return rl && (rl.global > 0 || rl.write > 0) ? new RateLimiter(rl) : null;
}

/** The spec's 429 body. */
export function rateLimitBody(limit: number, windowSecs: number): string {
  return JSON.stringify({ error: 'rate limit exceeded', limit, window_secs: windowSecs });
}

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> =>
  typeof (v as { then?: unknown } | null | undefined)?.then === 'function';

/** Route of a path without parameters, by method then exact path (find-my-way for the rest). */
type StaticRoutes = Map<string, Map<string, RouteDef>>;

function staticRoutes(routes: readonly RouteDef[]): StaticRoutes {
  const out: StaticRoutes = new Map();
  for (const r of routes) {
    if (/[:*]/.test(r.path)) continue;
    let byPath = out.get(r.method);
    if (!byPath) out.set(r.method, (byPath = new Map()));
    byPath.set(r.path, r);
    // find-my-way runs with ignoreTrailingSlash; the map answers both spellings the same way.
    if (r.path !== '/') byPath.set(`${r.path}/`, r);
  }
  return out;
}

/**
 * Build the HTTP handler serving the given REST routes. Pipeline (after the HTTP layer's concurrency cap and
 * body limit): CORS (preflight answered here), rate limits, routing (404), API key (401), the route handler.
 * A route handler that answers synchronously gets a synchronous response: no promise on the hot path.
 */
export function createApiHandler(ctx: NodeContext, routes: RouteDef[], opts: ApiOptions = {}): HttpHandler {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 200 });
  for (const r of routes) router.on(r.method, r.path, () => undefined, r);
  const exact = staticRoutes(routes);
  // find-my-way matches nothing for a malformed percent-encoding or a parameter over maxParamLength; a wildcard
  // route (the explorer's /explorer/*) still answers such paths under its prefix with its own error page.
  const wildcards = routes.filter((r) => r.path.endsWith('/*')).map((r) => ({ prefix: r.path.slice(0, -1), route: r }));
  const rl = opts.rateLimits;
  const limiter = opts.limiter !== undefined ? opts.limiter : createLimiter(rl);
  const clientIp = new ClientIpResolver(opts.trustedProxies ?? []);
  // The client address only when a limit or an audit record needs it (reading it has a cost on uWS).
  const clientOf = (req: HttpRequest) => clientIp.resolve(req.ip, req.headers['x-forwarded-for']);
  const { onResponse, corsOrigin } = opts;

  // The answer depends on Origin for every request, also when it is not echoed.
  const corsMatch = Object.freeze({ vary: 'Origin', 'access-control-allow-origin': corsOrigin ?? '' });
  /** CORS response headers (when configured): shared frozen sets, never changed (copy before adding to them). */
  const cors = (req: HttpRequest): Headers | undefined => {
    if (!corsOrigin) return undefined;
    if (corsOrigin === '*') return CORS_ANY;
    return req.headers.origin === corsOrigin ? corsMatch : CORS_VARY;
  };

  const toResponse = (result: ApiResult, base: Headers | undefined, req: HttpRequest): HttpResponse => {
    const status = result.status ?? 200;
    const headers = base ? (result.headers ? joinHeaders(base, result.headers) : base) : result.headers;
    if (result.raw !== undefined) return { status, headers, body: result.raw };
    if (result.stream) return { status, headers, stream: result.stream };
    if (result.body === undefined) return { status, headers };
    const body = stringifyExact(result.body);
    if (status === 200 && result.cache === 'immutable') return immutableAnswer(body, headers, req);
    // A JSON GET answer is about the head unless marked immutable. Most add no header of their own: a
    // shared frozen set (checked once by the HTTP layer).
    const type = req.method === 'GET' || req.method === 'HEAD' ? JSON_NO_STORE : JSON_TYPE;
    return { status, headers: headers ? joinHeaders(headers, type) : type, body };
  };

  const failed = (err: unknown, req: HttpRequest, base: Headers | undefined): HttpResponse => {
    if (!(err instanceof NodeError)) opts.onError?.(err, req);
    return toResponse(errorResult(err), base, req);
  };

  const { apiKeys } = opts;
  const keyHooks = opts.keyHooks ?? {};
  const adminMatches = (given: string) => opts.apiKey !== undefined && apiKeyMatches(opts.apiKey, given);
  /** A 401, reported (audit log, metrics); a key in the path is never reported. */
  const unauthorized = (
    req: HttpRequest,
    route: RouteDef | null,
    headers: Headers | undefined,
    reason: AuthFailure['reason'],
  ) => {
    opts.onAuthFailure?.({
      ip: clientOf(req),
      method: req.method,
      path: route?.keyInPath ? KEY_IN_PATH : req.path.slice(0, MAX_REPORTED_PATH),
      route: route?.path ?? UNMATCHED_ROUTE,
      reason,
    });
    return { status: 401, headers };
  };

  /** `keyed`: the request carries a key of the keys file (it passes the key check of every route but admin ones). */
  const handle = (
    req: HttpRequest,
    headers: Headers | undefined,
    route: RouteDef | null,
    params: object,
    keyed = false,
  ): HttpResponse | Promise<HttpResponse> => {
    if (route === null) return { status: 404, headers };
    if (route.auth && opts.apiKey && !(keyed && !route.admin)) {
      const given = req.headers['x-api-key'];
      if (!apiKeyMatches(opts.apiKey, given)) return unauthorized(req, route, headers, given === undefined ? 'missing' : 'wrong');
    }
    if (route.keyInPath && !apiKeys) return { status: 404, headers };
    let result: ApiResult | Promise<ApiResult>;
    try {
      result = route.handler(ctx, req, params as Record<string, string>);
    } catch (err) {
      return failed(err, req, headers);
    }
    if (isPromise(result)) {
      return result.then(
        (r) => toResponse(r, headers, req),
        (err) => failed(err, req, headers),
      );
    }
    return toResponse(result, headers, req);
  };

  return (req: HttpRequest): HttpResponse | Promise<HttpResponse> => {
    const t0 = onResponse ? performance.now() : 0;
    let res: HttpResponse | Promise<HttpResponse>;
    let label: string;
    if (req.method === 'OPTIONS') {
      const headers: Record<string, string> = { ...cors(req) };
      if (corsOrigin) {
        headers['access-control-allow-methods'] = 'GET, POST, OPTIONS';
        headers['access-control-allow-headers'] = 'Content-Type, X-API-Key';
        headers['access-control-max-age'] = '600';
      }
      res = { status: 204, headers };
      label = PREFLIGHT_ROUTE;
    } else {
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      let found: RouteDef | null | undefined = exact.get(method)?.get(req.path);
      let params: object = EMPTY_PARAMS;
      if (found === undefined) {
        const m = router.find(method as 'GET', req.path);
        found = m ? (m.store as RouteDef) : null;
        if (m) params = m.params;
        else {
          const w = wildcards.find((x) => x.route.method === method && req.path.startsWith(x.prefix));
          if (w) {
            found = w.route;
            params = { '*': req.path.slice(w.prefix.length) };
          }
        }
      }
      label = found ? found.path : UNMATCHED_ROUTE;
      const headers = cors(req);
      const key =
        apiKeys && !found?.noKey ? lookupKey(apiKeys, req, found, params as Record<string, string>, adminMatches) : null;
      // A keyed request is counted per key, not per IP (an unknown key still counts against its IP).
      const limited = found?.unlimited || key?.kind === 'grant' ? null : limiter?.check(clientOf(req), found?.write === true);
      if (key?.kind === 'grant' && !limited) {
        // Refused requests (403, 429) consume nothing.
        res = judgeKeyed(key.grant, req, found, keyHooks, headers) ?? handle(req, headers, found, params, true);
      } else if (key?.kind === 'unknown' && !limited) {
        keyHooks.onKeyRefused?.(UNKNOWN_KEY_LABEL, 'unknown_key');
        res = unauthorized(req, found, headers, 'wrong');
      } else if (limited) {
        opts.onRateLimited?.(limited.bucket, clientOf(req));
        const h: Record<string, string> = { ...headers };
        h['retry-after'] = String(limited.retryAfterSecs);
        // let browser clients of an allowed origin read when to retry
        if (h['access-control-allow-origin']) h['access-control-expose-headers'] = 'Retry-After';
        h['content-type'] = 'application/json';
        res = { status: 429, headers: h, body: rateLimitBody(limited.limit, limiter!.windowSecs) };
      } else {
        res = handle(req, headers, found, params);
      }
    }
    if (!onResponse) return res;
    if (isPromise(res)) {
      return res.then((r) => {
        onResponse(req.method, label, r.status, (performance.now() - t0) / 1000);
        return r;
      });
    }
    onResponse(req.method, label, res.status, (performance.now() - t0) / 1000);
    return res;
  };
}

type Headers = Readonly<Record<string, string>>;

const EMPTY_PARAMS = Object.freeze({});
const JSON_TYPE: Headers = Object.freeze({ 'content-type': 'application/json' });
const JSON_NO_STORE: Headers = Object.freeze({ 'content-type': 'application/json', 'cache-control': NO_STORE });

/** An answer that never changes: cacheable for good, with a strong ETag; 304 when If-None-Match names it. */
function immutableAnswer(body: string, headers: Headers | undefined, req: HttpRequest): HttpResponse {
  const etag = etagOf(body);
  const h: Record<string, string> = { ...headers, 'cache-control': IMMUTABLE_CACHE_CONTROL, etag };
  if (etagMatches(req.headers['if-none-match'], etag)) return { status: 304, headers: h };
  h['content-type'] = 'application/json';
  return { status: 200, headers: h, body };
}
const CORS_ANY: Headers = Object.freeze({ 'access-control-allow-origin': '*' });
const CORS_VARY: Headers = Object.freeze({ vary: 'Origin' });

/** Joined frozen header sets, by their parts: a pair is joined once, and the HTTP layer checks the result once. */
const joined = new WeakMap<Headers, WeakMap<Headers, Headers>>();

/** `base` with `extra`'s headers added (extra wins); never changes either. */
function joinHeaders(base: Headers, extra: Headers): Headers {
  if (!Object.isFrozen(base) || !Object.isFrozen(extra)) return { ...base, ...extra };
  let byExtra = joined.get(base);
  if (!byExtra) joined.set(base, (byExtra = new WeakMap()));
  let both = byExtra.get(extra);
  if (!both) byExtra.set(extra, (both = Object.freeze({ ...base, ...extra })));
  return both;
}
