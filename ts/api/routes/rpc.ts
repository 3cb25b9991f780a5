import { type DispatchOptions, type RpcDispatcher, createRpcDispatcher } from '../../rpc/index.js';
import type { NodeContext } from '../../services/index.js';
import { stringifyExact } from '../../util/json.js';
import type { RouteDef } from '../types.js';

const dispatchers = new WeakMap<NodeContext, RpcDispatcher>();

/** Hooks the node sets before serving (metrics, error logs). */
export const rpcHooks: DispatchOptions = {};

/** Answers one JSON-RPC body through this node's dispatcher (created on first use). */
const handleRpc: RouteDef['handler'] = async (ctx, req) => {
  let d = dispatchers.get(ctx);
  if (!d) {
    d = createRpcDispatcher(ctx, {
      maxBatch: rpcHooks.maxBatch,
      onCall: (...a) => rpcHooks.onCall?.(...a),
      onInternalError: (...a) => rpcHooks.onInternalError?.(...a),
    });
    dispatchers.set(ctx, d);
  }
  const out = await d.handleBody(req.body);
  // Only notifications: nothing to answer (JSON-RPC 2.0 §6).
  if (out === null) return { status: 200, raw: '', headers: { 'content-type': 'application/json' } };
  return { raw: stringifyExact(out), headers: { 'content-type': 'application/json' } };
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
