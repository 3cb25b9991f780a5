import { type NodeContext, evmActiveNext } from '../services/index.js';
import { type DispatchOptions, RpcDispatcher } from './dispatcher.js';
import { devAccountMethods } from './accounts.js';
import { traceMethods } from './debug.js';
import { anvilCompatMethods, devMethods } from './dev.js';
import { ethMethods } from './eth.js';
import { evmMethods } from './evm.js';
import { filterMethods } from './filters.js';
import { nativeMethods, netWeb3Methods } from './native.js';
import { nftMethods } from './nft.js';
import { simulateMethods } from './simulate.js';
import { subscriptionMethods } from './subscriptions.js';
import { txpoolMethods } from './txpool.js';
import { RPC, RpcError, type RpcTable } from './types.js';

export {
  MAX_BATCH,
  PARSE_ERROR,
  RpcDispatcher,
  type DispatchOptions,
  type RpcOutcome,
  idJson,
  serializeRpc,
} from './dispatcher.js';
export { StreamedResult, type StreamTarget, runStreamed } from './streamed.js';
export { RPC, RpcError, type RpcCaller, type RpcTable } from './types.js';
export { rpcCodeOf } from './error-codes.js';
export { ConnectionSubscriptions, type NotificationSink } from './subscriptions.js';

/** Methods of the spec's eth_ table that need the embedded EVM (issue: EVM). */
export const EVM_METHODS = [
  'eth_sendRawTransaction',
  'eth_call',
  'eth_estimateGas',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionReceipt',
  'eth_getBlockReceipts',
  'eth_getLogs',
  'eth_createAccessList',
] as const;

/** Before the chain's EVM activation height the EVM methods answer -32000 "EVM not active yet" (spec). */
function evmGate(method: RpcTable[string]): RpcTable[string] {
  return {
    params: method.params,
    handler: (ctx, params, caller) => {
      if (!evmActiveNext(ctx)) throw new RpcError(RPC.server, 'EVM not active yet');
      return method.handler(ctx, params, caller);
    },
  };
}

export const rpcMethods: RpcTable = {
  ...Object.fromEntries(EVM_METHODS.map((m) => [m, evmGate(evmMethods[m])])),
  eth_simulateV1: evmGate(simulateMethods.eth_simulateV1),
  ...ethMethods,
  ...filterMethods,
  ...netWeb3Methods,
  ...nativeMethods,
  ...nftMethods,
  ...traceMethods,
  ...txpoolMethods,
  ...subscriptionMethods,
};

/** rpc_modules: the namespaces this node serves, with geth's version string for each. */
function modulesMethod(names: readonly string[]): RpcTable[string] {
  const modules: Record<string, string> = {};
  for (const n of names) modules[n.slice(0, n.indexOf('_'))] = '1.0';
  const sorted = Object.fromEntries(Object.entries(modules).sort(([a], [b]) => a.localeCompare(b)));
  return { params: [], handler: () => sorted };
}

/** The method table a node serves: every network's methods, plus `extra` (the dev chain's), plus rpc_modules. */
export function rpcMethodTable(extra: RpcTable = {}): RpcTable {
  const table: RpcTable = { ...rpcMethods, ...extra };
  return { ...table, rpc_modules: modulesMethod([...Object.keys(table), 'rpc_modules']) };
}

/** The dev chain's methods (`--dev` only): test controls and the accounts the node signs for. */
export function devRpcMethods(opts: { anvilCompat?: boolean } = {}): RpcTable {
  return { ...devMethods, ...devAccountMethods, ...(opts.anvilCompat ? anvilCompatMethods : {}) };
}

export function createRpcDispatcher(ctx: NodeContext, opts: DispatchOptions = {}): RpcDispatcher {
  const extra = ctx.dev ? devRpcMethods({ anvilCompat: ctx.dev.anvilCompat }) : {};
  return new RpcDispatcher(ctx, rpcMethodTable(extra), opts);
}
export { parseTraceOptions } from './debug.js';
export { parseCallArgs } from './evm.js';
export { warmUpRpc } from './warm-up.js';
