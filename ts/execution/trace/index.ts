export {
  DEFAULT_TRACE_OPTIONS,
  TRACE_OUTPUT_CAP_BYTES,
  TRACE_TIMEOUT_DEFAULT_MS,
  TRACE_TIMEOUT_MAX_MS,
  TraceOutputTooLargeError,
  TraceTimeoutError,
  type StructLogSink,
  type TraceOptions,
  type TracerName,
} from './types.js';
export {
  type BlockTraceEntry,
  type TraceOutcome,
  type TraceSite,
  traceBlockTransactions,
  traceCall,
  traceTransaction,
} from './run.js';
export { traceNative, traceNativeTransfer, traceTokenOperation } from './native.js';
export type { NativeReceipt, TraceJob } from './task.js';
export { traceNftOperation } from './nft.js';
