import { NodeError } from '../../util/index.js';
import { CallTimeoutError } from '../deadline.js';

/** Spec limits (auxiliary interfaces, Limits): trace timeout default and maximum, struct-log output cap. */
export const TRACE_TIMEOUT_DEFAULT_MS = 10_000;
export const TRACE_TIMEOUT_MAX_MS = 30_000;
export const TRACE_OUTPUT_CAP_BYTES = 50 * 1024 * 1024;
/** Steps between two yields to the event loop while a trace runs on the main thread (in-process runner). */
export const TRACE_YIELD_STEPS = 4096;
/** Steps between two reads of the clock (the timeout); a clock read costs ~25 ns, a traced step ~1-5 µs. */
export const TRACE_CHECK_STEPS = 1024;

export type TracerName = 'structLogger' | 'callTracer' | 'prestateTracer';

/** Options of debug_traceTransaction / debug_traceCall / debug_traceBlock*, after parsing (rpc/debug.ts). */
export interface TraceOptions {
  tracer: TracerName;
  timeoutMs: number;
  /** Struct-log output cap in bytes of JSON (the spec's 50 MB by default). */
  outputCap: number;
  disableStack: boolean;
  enableMemory: boolean;
  disableStorage: boolean;
  enableReturnData: boolean;
  /** callTracer */
  onlyTopCall: boolean;
  withLog: boolean;
  /** prestateTracer (its tracerConfig: `prestateDisableStorage` is tracerConfig.disableStorage, not the struct logger's) */
  diffMode: boolean;
  disableCode: boolean;
  prestateDisableStorage: boolean;
  includeEmpty: boolean;
  /**
   * Struct logs only: where the steps' JSON goes as it is produced (the array's items, comma-separated, in
   * chunks ending on a step boundary) instead of into the result; the result then has no `structLogs`.
   */
  sink?: StructLogSink;
}

/** Receives struct-log JSON while a trace runs (HTTP streaming of debug_trace* answers). */
export interface StructLogSink {
  /** A chunk of the steps' JSON text (whole steps, comma-separated, continuing the previous chunk). */
  chunk(text: Buffer): void;
  /** Resolves when the consumer can take more (the trace waits here between slices of steps). */
  ready(): Promise<void>;
}

export const DEFAULT_TRACE_OPTIONS: TraceOptions = {
  tracer: 'structLogger',
  timeoutMs: TRACE_TIMEOUT_DEFAULT_MS,
  outputCap: TRACE_OUTPUT_CAP_BYTES,
  disableStack: false,
  enableMemory: true,
  disableStorage: false,
  enableReturnData: false,
  onlyTopCall: false,
  withLog: false,
  diffMode: false,
  disableCode: false,
  prestateDisableStorage: false,
  includeEmpty: false,
};

/** The trace ran past its timeout (spec: -32000 "trace timeout"). */
export class TraceTimeoutError extends NodeError {
  constructor() {
    super('trace timeout', 'DEADLINE_EXCEEDED');
  }
}

/**
 * A run stopped by the interpreter's deadline or a state read past it (deadline.ts) is the trace's timeout: the
 * one place a trace's CallTimeoutError becomes TraceTimeoutError (in the worker, in-process, in the pool).
 */
export function traceError(err: unknown): unknown {
  return err instanceof CallTimeoutError ? new TraceTimeoutError() : err;
}

/** The struct-log output passed the cap while being produced (spec: -32000 "output too large"). */
export class TraceOutputTooLargeError extends NodeError {
  constructor() {
    super('output too large', 'INVALID_ARGUMENT');
  }
}

/** What every tracer sees of a step (the fields of @ethereumjs/evm's `step` event it reads). */
export interface StepEvent {
  pc: number;
  gasLeft: bigint;
  gasRefund: bigint;
  opcode: { name: string; fee: number; dynamicFee?: bigint; code: number };
  stack: bigint[];
  depth: number;
  memory: Uint8Array;
  address: { bytes: Uint8Array; toString(): string };
  codeAddress: { toString(): string };
}
