import {
  type DispatchOptions,
  type RpcDispatcher,
  type RpcOutcome,
  StreamedResult,
  createRpcDispatcher,
  idJson,
  runStreamed,
  serializeRpc,
} from '../../rpc/index.js';
import type { NodeContext } from '../../services/index.js';
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
  // Filters belong to the client address (read only by the methods that need it).
  const out = dispatcherOf(ctx).handleBody(req.body, { client: () => `http:${req.ip}`, canStream: true });
  return out instanceof Promise ? out.then(answer) : answer(out);
};

/**
 * POST /rpc: JSON-RPC 2.0, key-checked and write-rate-limited like the spec says. POST / is the same endpoint:
 * MetaMask, Foundry and Hardhat's `localhost` network send JSON-RPC to the bare URL (http://127.0.0.1:8545);
 * GET / stays the discovery document.
 */
export const rpcRoutes: RouteDef[] = [
  { method: 'POST', path: '/rpc', auth: true, write: true, handler: handleRpc },
  { method: 'POST', path: '/', auth: true, write: true, handler: handleRpc },
];
