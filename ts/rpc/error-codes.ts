/**
 * JSON-RPC's one mapping from a node failure to its error code: by the failure's status (util/errors.ts), with
 * the spec's and geth's exceptions by class first. The dispatcher and streamed answers (rpcErrorOf in
 * geth-errors.ts) read it; nothing else in ts/rpc picks a code for a failure.
 */
import { TransactionShapeError } from '../ledger/index.js';
import {
  ExecutionRevertedError,
  type FailureStatus,
  InvalidParamsError,
  InvalidTransactionError,
  type NodeError,
} from '../util/index.js';
import { RPC, RpcError } from './types.js';

const RPC_CODE: Record<FailureStatus, number> = {
  INVALID_ARGUMENT: RPC.server,
  FAILED_PRECONDITION: RPC.server,
  NOT_FOUND: RPC.server,
  PERMISSION_DENIED: RPC.server,
  // Every call worker busy: geth's "limit exceeded".
  RESOURCE_EXHAUSTED: RPC.limitExceeded,
  UNAVAILABLE: RPC.server,
  DEADLINE_EXCEEDED: RPC.server,
  INTERNAL: RPC.server,
};

/** The JSON-RPC error code of a failure. */
export function rpcCodeOf(err: NodeError): number {
  // This transport's own errors name their code.
  if (err instanceof RpcError) return err.rpcCode;
  // A submitted transaction that is not a well-formed one is bad params; the rules it breaks are rejections (below).
  if (err instanceof InvalidParamsError || err instanceof TransactionShapeError) return RPC.invalidParams;
  // Spec: a mempool rejection is an internal error (-32603), a full pool included.
  if (err instanceof InvalidTransactionError) return RPC.internal;
  // geth: a reverted call answers code 3 with the revert data.
  if (err instanceof ExecutionRevertedError) return 3;
  return RPC_CODE[err.status];
}
