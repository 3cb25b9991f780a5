import type { NodeContext } from '../services/index.js';
import { NodeError } from '../util/errors.js';

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

export class RpcError extends NodeError {
  constructor(code: number, message: string, data?: unknown) {
    super(message, 400, code, data);
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

export interface RpcMethod {
  params: ParamSpec[];
  handler: (ctx: NodeContext, params: unknown[]) => unknown | Promise<unknown>;
}

export type RpcTable = Record<string, RpcMethod>;
