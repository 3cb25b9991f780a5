import { performance } from 'node:perf_hooks';
import type { NodeContext } from '../services/index.js';
import { NodeError, parseJsonExact, stringifyExact } from '../util/index.js';
import { rpcErrorOf } from './geth-errors.js';
import { checkParams } from './params.js';
import { LOCAL_CALLER, RPC, type RpcCaller, type RpcTable } from './types.js';

export const MAX_BATCH = 100;
const PARSE_ERROR_MESSAGE = 'Parse error: request body is not valid JSON';

/** A bigint id (beyond 2^53) is echoed exactly, as geth echoes the raw JSON. */
type Id = string | number | bigint | null;
export interface RpcResponse {
  jsonrpc: '2.0';
  id: Id;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface DispatchOptions {
  maxBatch?: number;
  /** Called once per executed call (metrics). */
  onCall?: (method: string, ok: boolean, seconds: number) => void;
  onInternalError?: (err: unknown, method: string) => void;
}

const err = (id: Id, code: number, message: string, data?: unknown): RpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

/** The answer to a body that is not JSON. */
export const PARSE_ERROR: RpcResponse = Object.freeze(err(null, RPC.parseError, PARSE_ERROR_MESSAGE)) as RpcResponse;

const validId = (v: unknown): v is Id =>
  v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint';

/** What a request body gets back: one response, a batch's responses, or nothing (notifications only). */
export type RpcOutcome = RpcResponse | RpcResponse[] | null;

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> =>
  typeof (v as { then?: unknown } | null | undefined)?.then === 'function';

/**
 * JSON-RPC 2.0 over one request body: single or batch (at most MAX_BATCH), notifications get no
 * entry, every failure becomes an error object. Returns null when nothing must be sent back.
 *
 * Hot path: a single request whose method answers synchronously (eth_blockNumber, eth_chainId,
 * eth_getBalance, ...) is answered synchronously, without a promise or a microtask; the HTTP layer then
 * writes the response in the same callback that read the body.
 */
export class RpcDispatcher {
  /** The method table as a Map: one lookup per call, no prototype to guard against. */
  private readonly table: ReadonlyMap<string, RpcTable[string]>;

  constructor(
    private readonly ctx: NodeContext,
    methods: RpcTable,
    private readonly opts: DispatchOptions = {},
  ) {
    this.table = new Map(Object.entries(methods));
  }

  has(method: string): boolean {
    return this.table.has(method);
  }

  handleBody(body: Buffer, caller: RpcCaller = LOCAL_CALLER): RpcOutcome | Promise<RpcOutcome> {
    let parsed: unknown;
    try {
      parsed = parseJsonExact(body.toString('utf8'));
    } catch {
      return PARSE_ERROR;
    }
    return this.handleParsed(parsed, caller);
  }

  /** Batch limits of a parsed body: the error answer when it is an empty or too large batch, else null. */
  batchError(parsed: unknown): RpcResponse | null {
    if (!Array.isArray(parsed)) return null;
    const max = this.opts.maxBatch ?? MAX_BATCH;
    if (parsed.length === 0) return err(null, RPC.invalidRequest, 'Invalid Request: empty batch');
    if (parsed.length > max) {
      return err(null, RPC.invalidRequest, `Invalid Request: batch too large: max ${max} requests, received ${parsed.length}`);
    }
    return null;
  }

  /** A body already parsed (per-key quotas read the method names first). */
  handleParsed(parsed: unknown, caller: RpcCaller = LOCAL_CALLER): RpcOutcome | Promise<RpcOutcome> {
    if (!Array.isArray(parsed)) return this.call(parsed, caller);
    return this.batchError(parsed) ?? this.batch(parsed, caller);
  }

  /** Sequential on purpose: calls in a batch see each other's effects in order (e.g. nonces). */
  private async batch(items: unknown[], caller: RpcCaller): Promise<RpcResponse[] | null> {
    const out: RpcResponse[] = [];
    // A batch's answers are written together: none of them streams.
    const inBatch: RpcCaller = caller.canStream ? { ...caller, canStream: false } : caller;
    for (const item of items) {
      const r = await this.call(item, inBatch);
      if (r) out.push(r);
    }
    return out.length ? out : null;
  }

  private call(req: unknown, caller: RpcCaller): RpcResponse | null | Promise<RpcResponse | null> {
    if (typeof req !== 'object' || req === null || Array.isArray(req))
      return err(null, RPC.invalidRequest, 'Invalid Request: expected an object');
    const r = req as Record<string, unknown>;
    const isNotification = !('id' in r);
    const rawId = r.id;
    const idOk = isNotification || validId(rawId);
    const id: Id = idOk && !isNotification ? (rawId as Id) : null;
    if (!idOk) return err(null, RPC.invalidRequest, 'Invalid Request: id must be a string, number or null');
    if (r.jsonrpc !== '2.0') return err(id, RPC.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
    const method = r.method;
    if (typeof method !== 'string' || method.length === 0)
      return err(id, RPC.invalidRequest, 'Invalid Request: method must be a string');
    // JSON-RPC 2.0 allows params to be omitted; geth also reads an explicit null as "no params".
    const params = r.params === undefined || r.params === null ? [] : r.params;
    if (!Array.isArray(params)) return err(id, RPC.invalidParams, 'invalid params: params must be an array');
    const entry = this.table.get(method);
    const t0 = performance.now();
    if (caller.admit && !caller.admit(method)) {
      return this.done(
        entry ? method : 'other',
        err(id, RPC.methodNotFound, 'method not allowed for this key'),
        t0,
        isNotification,
      );
    }
    if (!entry) {
      const miss = err(id, RPC.methodNotFound, `the method ${method.slice(0, 100)} does not exist/is not available`);
      return this.done('other', miss, t0, isNotification);
    }
    let result: unknown;
    try {
      checkParams(entry.params, params);
      result = entry.handler(this.ctx, params, caller);
    } catch (e) {
      return this.done(method, this.failure(id, e, method), t0, isNotification);
    }
    if (isPromise(result)) {
      return result.then(
        (v) => this.done(method, { jsonrpc: '2.0', id, result: v ?? null }, t0, isNotification),
        (e) => this.done(method, this.failure(id, e, method), t0, isNotification),
      );
    }
    return this.done(method, { jsonrpc: '2.0', id, result: result ?? null }, t0, isNotification);
  }

  private failure(id: Id, e: unknown, method: string): RpcResponse {
    if (e instanceof NodeError) {
      const { code, message } = rpcErrorOf(e);
      return err(id, code, message, e.data);
    }
    this.opts.onInternalError?.(e, method);
    return err(id, RPC.internal, 'internal error');
  }

  private done(label: string, response: RpcResponse, t0: number, isNotification: boolean): RpcResponse | null {
    this.opts.onCall?.(label, response.error === undefined, (performance.now() - t0) / 1000);
    return isNotification ? null : response;
  }
}

/**
 * The response body. A single success with a string result (most answers: hex quantities and data) is
 * written by hand, byte for byte what JSON.stringify gives; everything else goes through stringifyExact.
 */
export function serializeRpc(out: RpcResponse | RpcResponse[]): string {
  if (!Array.isArray(out) && out.error === undefined && typeof out.result === 'string') {
    return `{"jsonrpc":"2.0","id":${idJson(out.id)},"result":${JSON.stringify(out.result)}}`;
  }
  return stringifyExact(out);
}

/** A response id as JSON text (a bigint id exactly). */
export function idJson(id: Id): string {
  return typeof id === 'bigint'
    ? id.toString()
    : typeof id === 'number'
      ? Number.isFinite(id)
        ? String(id)
        : 'null'
      : JSON.stringify(id);
}
