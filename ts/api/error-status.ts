/**
 * REST's one mapping from a node failure to its HTTP status: by the failure's status (util/errors.ts), with
 * the spec's exceptions by class first. handler.ts answers with it; nothing else in ts/api picks a status
 * for a failure.
 */
import { StaleStateViewError } from '../services/index.js';
import { type FailureStatus, InvalidTransactionError, type NodeError } from '../util/index.js';

const HTTP_STATUS: Record<FailureStatus, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  NOT_FOUND: 404,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 503,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 503,
  INTERNAL: 500,
};

/** The HTTP status of a failure. */
export function httpStatusOf(err: NodeError): number {
  // Spec: every refused submission is a 400, a full pool included (gRPC tells that one apart).
  if (err instanceof InvalidTransactionError) return 400;
  // A read whose state view a rollback removed: a conflict with the chain, not bad input.
  if (err instanceof StaleStateViewError) return 409;
  return HTTP_STATUS[err.status];
}
