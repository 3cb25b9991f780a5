import type { NodeContext } from '../services/index.js';
import { NodeError } from '../util/errors.js';
import { parseJsonExact } from '../util/json.js';
import { rpcErrorOf } from './geth-errors.js';
import { checkParams } from './params.js';
import { RPC, type RpcTable } from './types.js';

export const MAX_BATCH = 100;

/** A bigint id (beyond 2^53) is echoed exactly, as geth echoes the raw JSON. */
type Id = string | number | bigint | null;
interface RpcResponse {
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

const validId = (v: unknown): v is Id =>
  v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint';

/**
 * JSON-RPC 2.0 over one request body: single or batch (at most MAX_BATCH), notifications get no
 * entry, every failure becomes an error object. Returns null when nothing must be sent back.
 */
export class RpcDispatcher {
  constructor(
    private readonly ctx: NodeContext,
    private readonly methods: RpcTable,
    private readonly opts: DispatchOptions = {},
  ) {}

  has(method: string): boolean {
    return Object.hasOwn(this.methods, method);
  }

  async handleBody(body: Buffer): Promise<RpcResponse | RpcResponse[] | null> {
    let parsed: unknown;
    try {
      parsed = parseJsonExact(body.toString('utf8'));
    } catch {
      return err(null, RPC.parseError, 'Parse error: request body is not valid JSON');
    }
    if (!Array.isArray(parsed)) return this.call(parsed);
    const max = this.opts.maxBatch ?? MAX_BATCH;
    if (parsed.length === 0) return err(null, RPC.invalidRequest, 'Invalid Request: empty batch');
    if (parsed.length > max) {
      return err(null, RPC.invalidRequest, `Invalid Request: batch too large: max ${max} requests, received ${parsed.length}`);
    }
    const out: RpcResponse[] = [];
    // Sequential on purpose: calls in a batch see each other's effects in order (e.g. nonces).
    for (const item of parsed) {
      const r = await this.call(item);
      if (r) out.push(r);
    }
    return out.length ? out : null;
  }

  private async call(req: unknown): Promise<RpcResponse | null> {
    if (typeof req !== 'object' || req === null || Array.isArray(req))
      return err(null, RPC.invalidRequest, 'Invalid Request: expected an object');
    const r = req as Record<string, unknown>;
    const isNotification = !('id' in r);
    const id: Id = !isNotification && validId(r.id) ? r.id : null;
    if (!isNotification && !validId(r.id))
      return err(null, RPC.invalidRequest, 'Invalid Request: id must be a string, number or null');
    if (r.jsonrpc !== '2.0') return err(id, RPC.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
    if (typeof r.method !== 'string' || r.method.length === 0)
      return err(id, RPC.invalidRequest, 'Invalid Request: method must be a string');
    // JSON-RPC 2.0 allows params to be omitted; geth also reads an explicit null as "no params".
    if (r.params !== undefined && r.params !== null && !Array.isArray(r.params)) {
      return err(id, RPC.invalidParams, 'invalid params: params must be an array');
    }
    const method = r.method;
    const entry = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    const t0 = performance.now();
    let response: RpcResponse;
    if (!entry) {
      response = err(id, RPC.methodNotFound, `the method ${method.slice(0, 100)} does not exist/is not available`);
    } else {
      try {
        const params = (r.params ?? []) as unknown[];
        checkParams(entry.params, params);
        response = { jsonrpc: '2.0', id, result: (await entry.handler(this.ctx, params)) ?? null };
      } catch (e) {
        if (e instanceof NodeError) {
          const { code, message } = rpcErrorOf(e);
          response = err(id, code, message, e.data);
        } else {
          this.opts.onInternalError?.(e, method);
          response = err(id, RPC.internal, 'internal error');
        }
      }
    }
    this.opts.onCall?.(entry ? method : 'other', response.error === undefined, (performance.now() - t0) / 1000);
    return isNotification ? null : response;
  }
}
