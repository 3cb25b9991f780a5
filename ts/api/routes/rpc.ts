import {
  type DispatchOptions,
  PARSE_ERROR,
  type RpcDispatcher,
  type RpcOutcome,
  StreamedResult,
  createRpcDispatcher,
  idJson,
  runStreamed,
  serializeRpc,
} from '../../rpc/index.js';
import type { HttpRequest } from '../../http/index.js';
import type { NodeContext } from '../../services/index.js';
import { parseJsonExact } from '../../util/index.js';
import { type KeyedRpc, keyRateLimited, keyedRpcOf } from '../key-gate.js';
import type { ApiResult, RouteDef } from '../types.js';

const dispatchers = new WeakMap<NodeContext, RpcDispatcher>();

/** Hooks the node sets before serving (metrics, error logs). */
export const rpcHooks: DispatchOptions = {};

/** Shared, frozen: the HTTP layer validates a frozen header set once (ts/http/common.ts). */
const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/** The node's JSON-RPC dispatcher (one per context), shared by POST /rpc and the WebSocket endpoint. */
export function dispatcherOf(ctx: NodeContext): RpcDispatcher {
  let d = dispatchers.get(ctx);
  if (!d) {
    d = createRpcDispatcher(ctx, {
      maxBatch: rpcHooks.maxBatch,
      onCall: (method, ok, seconds) => rpcHooks.onCall?.(method, ok, seconds),
      onInternalError: (err, method) => rpcHooks.onInternalError?.(err, method),
    });
    dispatchers.set(ctx, d);
  }
  return d;
}

function answer(out: RpcOutcome): ApiResult | Promise<ApiResult> {
  // Only notifications: nothing to answer (JSON-RPC 2.0 §6).
  if (out === null) return { status: 200, raw: '', headers: JSON_HEADERS };
  if (!Array.isArray(out) && out.result instanceof StreamedResult) return streamedAnswer(idJson(out.id), out.result);
  return { raw: serializeRpc(out), headers: JSON_HEADERS };
}

/** A StreamedResult (debug_trace* struct logs) in one piece when small, else as a chunked body. */
async function streamedAnswer(id: string, r: StreamedResult): Promise<ApiResult> {
  const a = await runStreamed(id, r, (err) => rpcHooks.onInternalError?.(err, 'debug_trace'));
  if ('whole' in a) return { raw: a.whole, headers: JSON_HEADERS };
  return {
    headers: JSON_HEADERS,
    stream: (body) =>
      a.attach({
        write: (chunk) => body.write(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk),
        end: (chunk) => body.end(chunk ? Buffer.from(chunk, 'latin1') : undefined),
        onDrain: (cb) => body.onDrain(cb),
        onClose: (cb) => body.onClose(cb),
      }),
  };
}

/** Answers one JSON-RPC body; synchronous when the call is (most reads): no promise between body and answer. */
const handleRpc: RouteDef['handler'] = (ctx, req) => {
  const keyed = keyedRpcOf(req);
  if (keyed) return handleKeyedRpc(ctx, req, keyed);
  // Filters belong to the client address (read only by the methods that need it).
  const out = dispatcherOf(ctx).handleBody(req.body, { client: () => `http:${req.ip}`, canStream: true });
  return out instanceof Promise ? out.then(answer) : answer(out);
};

/**
 * A request with a key of the keys file: each call is judged by its method name (deny wins; a refused one
 * answers -32601 "method not allowed for this key"), the admitted calls' weights are charged together, and
 * a request whose weight does not fit the key's budget is refused whole with 429 (nothing consumed).
 */
function handleKeyedRpc(ctx: NodeContext, req: HttpRequest, { grant, hooks }: KeyedRpc): ApiResult | Promise<ApiResult> {
  const d = dispatcherOf(ctx);
  let parsed: unknown;
  try {
    parsed = parseJsonExact(req.body.toString('utf8'));
  } catch {
    return answer(PARSE_ERROR);
  }
  const batchError = d.batchError(parsed);
  if (batchError) return answer(batchError);
  let weight = 0;
  let denied = 0;
  for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
    const method = (call as { method?: unknown } | null)?.method;
    // A malformed call is answered by the dispatcher; it weighs 1 like any request.
    if (typeof method !== 'string') weight += 1;
    else if (grant.allows(method)) weight += grant.weightOf(method);
    else denied++;
  }
  for (let i = 0; i < denied; i++) hooks.onKeyRefused?.(grant.label, 'denied');
  if (weight > 0) {
    const refused = keyRateLimited(grant, weight, hooks, undefined);
    if (refused) return { status: refused.status, headers: refused.headers, raw: refused.body as string };
    hooks.onKeyRequest?.(grant.label, weight);
  }
  const out = d.handleParsed(parsed, { client: () => `http:${req.ip}`, canStream: true, admit: (m) => grant.allows(m) });
  return out instanceof Promise ? out.then(answer) : answer(out);
}

/**
 * POST /rpc: JSON-RPC 2.0, key-checked and write-rate-limited like the spec says. POST / is the same endpoint:
 * MetaMask, Foundry and Hardhat's `localhost` network send JSON-RPC to the bare URL (http://127.0.0.1:8545);
 * GET / stays the discovery document.
 */
export const rpcRoutes: RouteDef[] = [
  { method: 'POST', path: '/rpc', auth: true, write: true, rpc: true, handler: handleRpc },
  { method: 'POST', path: '/', auth: true, write: true, rpc: true, handler: handleRpc },
  {
    method: 'POST',
    path: '/rpc/:key',
    auth: true,
    write: true,
    rpc: true,
    keyInPath: true,
    summary: 'JSON-RPC with the API key as the last path segment (with --api-keys; 404 without)',
    handler: handleRpc,
  },
];
