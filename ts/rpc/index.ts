import type { NodeContext } from '../services/index.js';
import { type DispatchOptions, RpcDispatcher } from './dispatcher.js';
import { ethMethods } from './eth.js';
import { nativeMethods, netWeb3Methods } from './native.js';
import { RPC, RpcError, type RpcTable } from './types.js';

export { MAX_BATCH, RpcDispatcher, type DispatchOptions } from './dispatcher.js';
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

/**
 * Until the EVM module lands: before the chain's EVM activation height these answer
 * -32000 "EVM not active yet" (as the spec says for testnet); after it they are absent (-32601).
 */
function evmGate(name: string): RpcTable[string] {
  return {
    params: ['any?', 'any?', 'any?'],
    handler: (ctx) => {
      if (ctx.chain.height + 1 < ctx.chain.params.activation.evm) throw new RpcError(RPC.server, 'EVM not active yet');
      throw new RpcError(RPC.methodNotFound, `the method ${name} does not exist/is not available`);
    },
  };
}

export const rpcMethods: RpcTable = {
  ...Object.fromEntries(EVM_METHODS.map((m) => [m, evmGate(m)])),
  ...ethMethods,
  ...netWeb3Methods,
  ...nativeMethods,
};

export function createRpcDispatcher(ctx: NodeContext, opts: DispatchOptions = {}): RpcDispatcher {
  return new RpcDispatcher(ctx, rpcMethods, opts);
}
