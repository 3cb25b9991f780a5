import { type DispatchOptions, type RpcDispatcher, type RpcOutcome, createRpcDispatcher, serializeRpc } from '../../rpc/index.js';
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

function answer(out: RpcOutcome): ApiResult {
  // Only notifications: nothing to answer (JSON-RPC 2.0 §6).
  if (out === null) return { status: 200, raw: '', headers: JSON_HEADERS };
  return { raw: serializeRpc(out), headers: JSON_HEADERS };
}

/** Answers one JSON-RPC body; synchronous when the call is (most reads): no promise between body and answer. */
const handleRpc: RouteDef['handler'] = (ctx, req) => {
  // Filters belong to the client address (read only by the methods that need it).
  const out = dispatcherOf(ctx).handleBody(req.body, { client: () => `http:${req.ip}` });
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
