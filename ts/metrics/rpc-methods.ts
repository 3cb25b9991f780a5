/**
 * JSON-RPC method names that get their own metric label; anything else is counted as `other`, so a client
 * sending random method names cannot create unbounded time series.
 */
const SPEC_METHODS = [
  // eth_
  'eth_accounts',
  'eth_blockNumber',
  'eth_call',
  'eth_chainId',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getCode',
  'eth_getLogs',
  'eth_getStorageAt',
  'eth_getTransactionByHash',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_maxPriorityFeePerGas',
  'eth_sendRawTransaction',
  'eth_syncing',
  // net_, web3_
  'net_listening',
  'net_version',
  'web3_clientVersion',
  // native_
  'native_getBalance',
  'native_getBftStatus',
  'native_getDelegations',
  'native_getFinalizedHeight',
  'native_getStakingRewards',
  'native_getValidatorSet',
  'native_sendTransaction',
  // auxiliary interfaces: tracing and NFTs
  'debug_traceTransaction',
  'native_traceTransaction',
  'native_nftCollection',
  'native_nftToken',
  'native_nftTokensOf',
  'native_nftCollectionsOf',
] as const;

/** Label used for every method outside the known set. */
export const OTHER_RPC_METHOD = 'other';
/** Upper bound on distinct method labels, whatever gets registered. */
export const MAX_RPC_METHOD_LABELS = 256;

const known = new Set<string>(SPEC_METHODS);

/** Adds method names served by the dispatcher (e.g. its method table's keys) to the labelled set. */
export function registerRpcMethods(names: Iterable<string>): void {
  for (const name of names) {
    if (known.size >= MAX_RPC_METHOD_LABELS) return;
    if (/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name)) known.add(name);
  }
}

/** The metric label for a method name. */
export function rpcMethodLabel(method: string): string {
  return known.has(method) ? method : OTHER_RPC_METHOD;
}
