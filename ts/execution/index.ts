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
export { FEE_COLLECTOR, PARAMS_LOADED, chainCommon, transactionGasCapOf } from './common.js';
export { PackMeter, packMeter } from './pack-meter.js';
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
  type CallOverrides,
  type EstimateOutcome,
  estimateCallGas,
  intrinsicGas,
  simulateCall,
} from './call.js';
export { CallTimeoutError } from './deadline.js';
export {
  MAX_SIMULATE_BLOCKS,
  MAX_SIMULATE_CALLS_PER_BLOCK,
  MAX_SIMULATE_TOTAL_CALLS,
  SIM_ERROR_CODES,
  type SimBlockResult,
  type SimBlockSpec,
  type SimCallResult,
  type SimTx,
  type SimulateOutcome,
  type SimulateSpec,
} from './simulate.js';
export { NATIVE_TRANSFER_ADDRESS, type SimLog } from './sim-logs.js';
export { type CallFees, type FeeFields, callFees, mixedFeesError } from './fees.js';
export {
  type AccountOverride,
  type BlockOverrides,
  type HeaderOverrides,
  OverrideError,
  type StateOverrideSet,
  withBlockOverrides,
} from './overrides.js';
export type { CallKind, CallReply } from './call-task.js';
export {
  CallPool,
  CallPoolBusyError,
  type CallPoolOptions,
  type CallRequest,
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
export * from './parallel/index.js';
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
