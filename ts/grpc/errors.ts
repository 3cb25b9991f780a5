/**
 * gRPC status of every failure, mapped in this one place for both transports (HTTP/2 and gRPC-Web).
 * Handlers throw the node's errors (ts/util/errors.ts, which carry their gRPC status) or a GrpcError; a client
 * reads the status and message from the grpc-status / grpc-message trailers.
 */
import { status } from '@grpc/grpc-js';
import { RejectedTransactionError } from '../services/index.js';
import { NodeError } from '../util/index.js';

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

/**
 * The error's gRPC status; anything unexpected is INTERNAL with a fixed message (the cause goes to the log).
 * A node error names its gRPC status itself (util/errors.ts); a refused transaction adds the rule it broke.
 */
export function toGrpcError(err: unknown): { error: GrpcError; unexpected: boolean } {
  if (err instanceof GrpcError) return { error: err, unexpected: false };
  if (!(err instanceof NodeError)) return { error: new GrpcError(status.INTERNAL, 'internal error'), unexpected: true };
  const trailers: Record<string, string> = err instanceof RejectedTransactionError ? { [REJECT_REASON_TRAILER]: err.reason } : {};
  return { error: new GrpcError(status[err.status], err.message, trailers), unexpected: false };
}
