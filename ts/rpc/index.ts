import type { NodeContext } from '../services/index.js';
import { type DispatchOptions, RpcDispatcher } from './dispatcher.js';
import { traceMethods } from './debug.js';
import { ethMethods } from './eth.js';
import { evmMethods } from './evm.js';
import { nativeMethods, netWeb3Methods } from './native.js';
import { nftMethods } from './nft.js';
import { RPC, RpcError, type RpcTable } from './types.js';

export { MAX_BATCH, RpcDispatcher, type DispatchOptions, type RpcOutcome, serializeRpc } from './dispatcher.js';
export { RPC, RpcError, type RpcTable } from './types.js';

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
] as const;

/** Before the chain's EVM activation height the EVM methods answer -32000 "EVM not active yet" (spec). */
function evmGate(method: RpcTable[string]): RpcTable[string] {
  return {
    params: method.params,
    handler: (ctx, params) => {
      if (ctx.chain.height + 1 < ctx.chain.params.activation.evm) throw new RpcError(RPC.server, 'EVM not active yet');
      return method.handler(ctx, params);
    },
  };
}

export const rpcMethods: RpcTable = {
  ...Object.fromEntries(EVM_METHODS.map((m) => [m, evmGate(evmMethods[m])])),
  ...ethMethods,
  ...netWeb3Methods,
  ...nativeMethods,
  ...nftMethods,
  ...traceMethods,
};

export function createRpcDispatcher(ctx: NodeContext, opts: DispatchOptions = {}): RpcDispatcher {
  return new RpcDispatcher(ctx, rpcMethods, opts);
}
