import type { NodeContext } from '../services/index.js';
import { NodeError } from '../util/index.js';

/** JSON-RPC 2.0 error codes used by the node (spec: Errors / JSON-RPC). */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  server: -32000,
  limitExceeded: -32005,
} as const;

/** A JSON-RPC failure that names its own code (error-codes.ts answers with it). */
export class RpcError extends NodeError {
  constructor(
    readonly rpcCode: number,
    message: string,
    data?: unknown,
  ) {
    super(message, 'INVALID_ARGUMENT', data);
  }
}

export const invalidParams = (message: string): RpcError => new RpcError(RPC.invalidParams, message);

/** Kinds of positional parameters; a trailing '?' marks an optional one. */
export type ParamKind =
  | 'address'
  | 'blockTag'
  | 'hash'
  | 'bool'
  | 'quantity'
  | 'object'
  | 'array'
  | 'any'
  | 'blockRef'
  | 'storageKey';
export type ParamSpec = `${ParamKind}` | `${ParamKind}?`;

/**
 * Who is calling. Filters and subscriptions belong to a client: an HTTP client (by address) or one
 * WebSocket connection, which also carries the connection's subscriptions.
 */
export interface RpcCaller {
  /** Stable key of the client (`http:<address>` or `ws:<connection>`); read only by methods that need it. */
  client(): string;
  /** The connection's subscriptions; absent over HTTP (eth_subscribe then answers "notifications not supported"). */
  subscriptions?: SubscriptionHost;
  /** The answer may be a StreamedResult (rpc/streamed.ts): a single request over HTTP, not a batch item. */
  canStream?: boolean;
  /** Per-key allow/deny (ts/api/api-keys.ts): a method it refuses answers -32601 "method not allowed for this key". */
  admit?: (method: string) => boolean;
}

/** eth_subscribe / eth_unsubscribe on a push-capable connection (rpc/subscriptions.ts). */
export interface SubscriptionHost {
  subscribe(ctx: NodeContext, params: unknown[]): string;
  unsubscribe(id: string): boolean;
}

/** Calls without a caller (in-process tests, benches) share one client. */
export const LOCAL_CALLER: RpcCaller = { client: () => 'local' };

export interface RpcMethod {
  params: ParamSpec[];
  handler: (ctx: NodeContext, params: unknown[], caller: RpcCaller) => unknown | Promise<unknown>;
}

export type RpcTable = Record<string, RpcMethod>;
