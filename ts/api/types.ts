import type { HttpResponse, HttpRequest } from '../http/index.js';
import type { NodeContext } from '../services/index.js';
import type { JsonSchema } from './schema.js';

/** What a REST handler returns; the server serializes body with exact integers. */
export interface ApiResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Pre-serialized body (e.g. Prometheus text, HTML). */
  raw?: string;
  /** A body written while it is produced (HttpResponse.stream: chunked, with back-pressure). */
  stream?: HttpResponse['stream'];
  /** The answer can never change (ts/api/cache.ts): cacheable for good, with a strong ETag. */
  cache?: 'immutable';
}

export type RouteHandler = (ctx: NodeContext, req: HttpRequest, params: Record<string, string>) => ApiResult | Promise<ApiResult>;

export interface RouteDef {
  method: 'GET' | 'POST';
  path: string;
  handler: RouteHandler;
  /** Checks X-API-Key when the node has one set. */
  auth?: boolean;
  /** Counts against the write rate limit. */
  write?: boolean;
  /** Exempt from the per-IP rate limits (GET /ready: a balancer's checks all come from one address). */
  unlimited?: boolean;
  /** Needs no key and ignores one (GET /health, /ready, /metrics): never judged by the keys file. */
  noKey?: boolean;
  /** A JSON-RPC endpoint: a keyed request is judged per call by method name (ts/api/key-gate.ts). */
  rpc?: boolean;
  /** The key may be the last path segment (`POST /rpc/:key`); such a route exists only with a keys file. */
  keyInPath?: boolean;
  /** An admin route: only the node's `--api-key` passes its key check, never a keys-file key. */
  admin?: boolean;
  // Documentation, declared once per route; ts/api/openapi.ts builds GET /openapi.json from it.
  /** One-line summary. */
  summary?: string;
  /** Longer notes (limits, what a later issue completes). */
  description?: string;
  /** OpenAPI tag (resource group). */
  tag?: string;
  /** Schemas of the path parameters by name (default: string). */
  params?: Record<string, JsonSchema>;
  /** Schemas of the accepted query parameters by name (all optional). */
  query?: Record<string, JsonSchema>;
  /** Schema of the JSON request body. */
  body?: JsonSchema;
  /** Schema of the 200 JSON body. */
  response?: JsonSchema;
  /** Content type of a non-JSON 200 body (e.g. Prometheus text). */
  produces?: string;
  /** Other statuses the route answers with and when (400/401/429 are added from the route's shape). */
  statuses?: Record<number, string>;
}
