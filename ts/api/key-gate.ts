/**
 * Where per-key quotas meet a request (docs/operations.md, "API keys"): which key a request carries, the
 * REST judgement (allow/deny, weight, rate) and the hand-over of a JSON-RPC request's grant to the /rpc
 * route, which judges each call by its method name.
 */
import type { HttpRequest, HttpResponse } from '../http/index.js';
import { type ApiKeyRegistry, type KeyGrant, type KeyRefusal, restSubject } from './api-keys.js';
import type { RouteDef } from './types.js';

/** Metrics of keyed requests, by the key's label (never the key). */
export interface KeyHooks {
  /** An admitted request (a JSON-RPC batch counts once) and the weight units it was charged. */
  onKeyRequest?: (label: string, weight: number) => void;
  /** A refused request or call. The label of an unknown key is UNKNOWN_KEY_LABEL. */
  onKeyRefused?: (label: string, reason: KeyRefusal) => void;
}

/** `key` label of requests whose key is not in the file. */
export const UNKNOWN_KEY_LABEL = 'unknown';

/** A JSON-RPC request's key, handed from the API handler to the /rpc route. */
export interface KeyedRpc {
  grant: KeyGrant;
  hooks: KeyHooks;
}

const keyedRpc = new WeakMap<HttpRequest, KeyedRpc>();

/** The key of a JSON-RPC request, when it carries one from the keys file. */
export function keyedRpcOf(req: HttpRequest): KeyedRpc | undefined {
  return keyedRpc.get(req);
}

/** What a request's key means: none (per-IP rules), unknown (401), or a grant. */
export type KeyLookup = { kind: 'none' } | { kind: 'unknown' } | { kind: 'grant'; grant: KeyGrant };

const NONE: KeyLookup = { kind: 'none' };
const UNKNOWN: KeyLookup = { kind: 'unknown' };

/**
 * The key a request carries: `X-API-Key`, or the last path segment of `POST /rpc/<key>`. The node's own
 * `--api-key` (write and admin routes) is not a quota key: such a request follows today's rules.
 */
export function lookupKey(
  registry: ApiKeyRegistry,
  req: HttpRequest,
  route: RouteDef | null,
  params: Record<string, string>,
  adminMatches: (given: string) => boolean,
): KeyLookup {
  const given = req.headers['x-api-key'] ?? (route?.keyInPath ? params.key : undefined);
  if (given === undefined || given === '') return NONE;
  if (adminMatches(given)) return NONE;
  const grant = registry.lookup(given);
  return grant ? { kind: 'grant', grant } : UNKNOWN;
}

const FORBIDDEN_BODY = JSON.stringify({ success: false, error: 'route not allowed for this key' });

/**
 * Judges a keyed REST request: 403 when the key may not call this route, 429 when its budget for the
 * window is spent (neither consumes anything), else charges the route's weight and returns null. A
 * JSON-RPC route is not judged here: its grant goes to the route, which judges each call.
 */
export function judgeKeyed(
  grant: KeyGrant,
  req: HttpRequest,
  route: RouteDef | null,
  hooks: KeyHooks,
  base: Readonly<Record<string, string>> | undefined,
): HttpResponse | null {
  if (route?.rpc) {
    keyedRpc.set(req, { grant, hooks });
    return null;
  }
  const subject = restSubject(req.method, req.path);
  if (!grant.allows(subject)) {
    hooks.onKeyRefused?.(grant.label, 'denied');
    return { status: 403, headers: { ...base, 'content-type': 'application/json' }, body: FORBIDDEN_BODY };
  }
  const weight = grant.weightOf(subject);
  const refused = keyRateLimited(grant, weight, hooks, base);
  if (refused) return refused;
  hooks.onKeyRequest?.(grant.label, weight);
  return null;
}

/** Charges `weight` to the key; the spec's 429 (with Retry-After) when it does not fit, else null. */
export function keyRateLimited(
  grant: KeyGrant,
  weight: number,
  hooks: KeyHooks,
  base: Readonly<Record<string, string>> | undefined,
): HttpResponse | null {
  const wait = grant.charge(weight);
  if (wait === null) return null;
  hooks.onKeyRefused?.(grant.label, 'rate');
  const headers: Record<string, string> = { ...base, 'retry-after': String(wait), 'content-type': 'application/json' };
  if (headers['access-control-allow-origin']) headers['access-control-expose-headers'] = 'Retry-After';
  const body = JSON.stringify({ error: 'rate limit exceeded', limit: grant.entry.rate, window_secs: grant.entry.windowSecs });
  return { status: 429, headers, body };
}
