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

/** Shared, frozen: the HTTP layer validates a frozen header set once (ts/http/common.ts). */
const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/**
 * A node's JSON-RPC dispatchers, built with its options (metrics, error log): one per context, on first use,
 * shared by POST /rpc and the WebSocket endpoint. Each node makes its own (ts/node), so two nodes in one
 * process (tests) never count or log each other's calls.
 */
export interface RpcDispatchers {
  /** The context's dispatcher. */
  of(ctx: NodeContext): RpcDispatcher;
  /** The options the dispatchers were built with (a streamed answer reports its late failure here). */
  readonly options: Readonly<DispatchOptions>;
}

export function rpcDispatchers(options: DispatchOptions = {}): RpcDispatchers {
  const built = new WeakMap<NodeContext, RpcDispatcher>();
  return {
    options,
    of(ctx) {
      let d = built.get(ctx);
      if (!d) {
        d = createRpcDispatcher(ctx, options);
        built.set(ctx, d);
      }
      return d;
    },
  };
}

function answer(out: RpcOutcome, rpc: RpcDispatchers): ApiResult | Promise<ApiResult> {
  // Only notifications: nothing to answer (JSON-RPC 2.0 §6).
  if (out === null) return { status: 200, raw: '', headers: JSON_HEADERS };
  if (!Array.isArray(out) && out.result instanceof StreamedResult) return streamedAnswer(idJson(out.id), out.result, rpc);
  return { raw: serializeRpc(out), headers: JSON_HEADERS };
}

/** A StreamedResult (debug_trace* struct logs) in one piece when small, else as a chunked body. */
async function streamedAnswer(id: string, r: StreamedResult, rpc: RpcDispatchers): Promise<ApiResult> {
  const a = await runStreamed(id, r, (err) => rpc.options.onInternalError?.(err, 'debug_trace'));
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

/** Dispatchers with no hooks: for route tables and WebSocket endpoints built without a node's options (tests, tools). */
export const unhookedRpcDispatchers: RpcDispatchers = rpcDispatchers(Object.freeze({}));

/** Answers one JSON-RPC body; synchronous when the call is (most reads): no promise between body and answer. */
function rpcHandler(rpc: RpcDispatchers): RouteDef['handler'] {
  const reply = (out: RpcOutcome) => answer(out, rpc);
  return (ctx, req) => {
    const keyed = keyedRpcOf(req);
    if (keyed) return handleKeyedRpc(rpc, ctx, req, keyed);
    // Filters belong to the client address (read only by the methods that need it).
    const out = rpc.of(ctx).handleBody(req.body, { client: () => `http:${req.ip}`, canStream: true });
    return out instanceof Promise ? out.then(reply) : reply(out);
  };
}

/**
 * A request with a key of the keys file: each call is judged by its method name (deny wins; a refused one
 * answers -32601 "method not allowed for this key"), the admitted calls' weights are charged together, and
 * a request whose weight does not fit the key's budget is refused whole with 429 (nothing consumed).
 */
function handleKeyedRpc(
  rpc: RpcDispatchers,
  ctx: NodeContext,
  req: HttpRequest,
  { grant, hooks }: KeyedRpc,
): ApiResult | Promise<ApiResult> {
  const d = rpc.of(ctx);
  let parsed: unknown;
  try {
    parsed = parseJsonExact(req.body.toString('utf8'));
  } catch {
    return answer(PARSE_ERROR, rpc);
  }
  const batchError = d.batchError(parsed);
  if (batchError) return answer(batchError, rpc);
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
  return out instanceof Promise ? out.then((o) => answer(o, rpc)) : answer(out, rpc);
}

/**
 * POST /rpc: JSON-RPC 2.0, key-checked and write-rate-limited like the spec says. POST / is the same endpoint:
 * MetaMask, Foundry and Hardhat's `localhost` network send JSON-RPC to the bare URL (http://127.0.0.1:8545);
 * GET / stays the discovery document.
 */
export function rpcRoutes(rpc: RpcDispatchers): RouteDef[] {
  const handleRpc = rpcHandler(rpc);
  return [
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
}
