import { type DispatchOptions, type RpcDispatcher, createRpcDispatcher } from '../../rpc/index.js';
import type { NodeContext } from '../../services/index.js';
import { stringifyExact } from '../../util/json.js';
import type { RouteDef } from '../types.js';

const dispatchers = new WeakMap<NodeContext, RpcDispatcher>();

/** Hooks the node sets before serving (metrics, error logs). */
export const rpcHooks: DispatchOptions = {};

/** POST /rpc: JSON-RPC 2.0, key-checked and write-rate-limited like the spec says. */
export const rpcRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/rpc',
    auth: true,
    write: true,
    handler: async (ctx, req) => {
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
    },
  },
];
