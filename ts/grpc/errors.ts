/**
 * gRPC status of every failure, mapped in this one place for both transports (HTTP/2 and gRPC-Web).
 * Handlers throw the node's errors (ts/util/errors.ts) or a GrpcError; a client reads the status and
 * message from the grpc-status / grpc-message trailers.
 */
import { status } from '@grpc/grpc-js';
import { HistoryUnavailableError, RejectedTransactionError } from '../services/index.js';
import {
  EvmBusyError,
  EvmNotActiveError,
  EvmTimeoutError,
  InvalidParamsError,
  InvalidTransactionError,
  NodeError,
  NotFoundError,
  StateUnavailableError,
} from '../util/index.js';

export { status as GrpcStatus } from '@grpc/grpc-js';

/** A failure with its gRPC status; `metadata` adds trailers (e.g. the admission rule that refused a transaction). */
export class GrpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
    readonly metadata: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'GrpcError';
  }
}

export const invalidArgument = (message: string): GrpcError => new GrpcError(status.INVALID_ARGUMENT, message);

/** Trailer naming the admission rule that refused a BroadcastTx (nonce, fee, signature, pool_full, ...). */
export const REJECT_REASON_TRAILER = 'native-reject-reason';

/** The error's gRPC status; anything unexpected is INTERNAL with a fixed message (the cause goes to the log). */
export function toGrpcError(err: unknown): { error: GrpcError; unexpected: boolean } {
  if (err instanceof GrpcError) return { error: err, unexpected: false };
  if (err instanceof RejectedTransactionError) {
    // A full pool is worth retrying later; every other refusal is about the transaction itself.
    const code = err.reason === 'pool_full' ? status.RESOURCE_EXHAUSTED : status.INVALID_ARGUMENT;
    return { error: new GrpcError(code, err.message, { [REJECT_REASON_TRAILER]: err.reason }), unexpected: false };
  }
  if (err instanceof NodeError) return { error: new GrpcError(statusOf(err), err.message), unexpected: false };
  return { error: new GrpcError(status.INTERNAL, 'internal error'), unexpected: true };
}

function statusOf(err: NodeError): status {
  if (err instanceof NotFoundError) return status.NOT_FOUND;
  if (err instanceof StateUnavailableError || err instanceof HistoryUnavailableError || err instanceof EvmNotActiveError)
    return status.FAILED_PRECONDITION;
  if (err instanceof InvalidParamsError || err instanceof InvalidTransactionError) return status.INVALID_ARGUMENT;
  if (err instanceof EvmBusyError) return status.RESOURCE_EXHAUSTED;
  if (err instanceof EvmTimeoutError) return status.DEADLINE_EXCEEDED;
  if ((err as { reason?: string }).reason === 'not_active') return status.FAILED_PRECONDITION;
  if (err.httpStatus === 404) return status.NOT_FOUND;
  if (err.httpStatus === 429 || err.httpStatus === 503) return status.UNAVAILABLE;
  if (err.httpStatus >= 400 && err.httpStatus < 500) return status.INVALID_ARGUMENT;
  return status.INTERNAL;
}
