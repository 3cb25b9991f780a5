export {
  BASE_FEE_PER_GAS,
  BLOCK_GAS_LIMIT,
  BLOCK_GAS_TARGET,
  type BlockEnv,
  type ExecutionResult,
  type PackLimit,
  executeBlock,
  fitsPack,
  operationEnv,
} from './block-executor.js';
export { FEE_COLLECTOR, PARAMS_LOADED, chainCommon } from './common.js';
export {
  EVM_DATA_PREFIX,
  decodeRawTransaction,
  evmToSignedTransaction,
  isEvmTransaction,
  maxPricePerGas,
  rememberTypedTransaction,
  typedTransactionOf,
} from './evm-tx.js';
export {
  type LogRecord,
  type ReceiptRecord,
  EMPTY_BLOOM,
  decodeReceipts,
  encodeReceipts,
  logsBloom,
  encodeReceiptsReference,
} from './receipts.js';
export { EvmStateAdapter } from './state-adapter.js';
export {
  type AccessListItem,
  type AccessListOutcome,
  type CallArgs,
  type CallOutcome,
  type EstimateOutcome,
  estimateCallGas,
  intrinsicGas,
  simulateCall,
} from './call.js';
export { CallTimeoutError } from './deadline.js';
export type { CallKind, CallReply } from './call-task.js';
export {
  CallPool,
  CallPoolBusyError,
  type CallPoolOptions,
  type CallRunner,
  type CallState,
  DEFAULT_RPC_EVM_QUEUE,
  DEFAULT_RPC_EVM_TIMEOUT_MS,
  DEFAULT_RPC_GAS_CAP,
  DEV_RPC_EVM_INLINE_MS,
  InProcessCallRunner,
  defaultCallWorkers,
} from './call-pool.js';
export * from './trace/index.js';
export { DEFAULT_TRACE_QUEUE, InProcessTraceRunner, TracePool, type TraceRequest, type TraceRunner } from './trace-pool.js';
export { WorkerFailedError } from './worker-pool.js';
export {
  MalformedRawTransactionError,
  checkEvmGasRules,
  checkStoredEvmTransaction,
  decodeSignedEvmTransaction,
  isEvmChecked,
  markEvmChecked,
  storedEvmTransaction,
} from './evm-rules.js';
export { impersonatedRawTransaction, impersonatedSender } from './impersonation.js';
