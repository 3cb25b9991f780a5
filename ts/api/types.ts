import type { HttpRequest } from '../http/index.js';
import type { NodeContext } from '../services/index.js';

/** What a REST handler returns; the server serializes body with exact integers. */
export interface ApiResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Pre-serialized body (e.g. Prometheus text, HTML). */
  raw?: string;
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
}
