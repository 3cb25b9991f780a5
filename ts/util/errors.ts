/**
 * Errors as named classes carrying a transport-neutral status: the name of gRPC's canonical status code
 * (INVALID_ARGUMENT, NOT_FOUND, ...). No class carries an HTTP status or a JSON-RPC code: REST (ts/api),
 * JSON-RPC (ts/rpc), gRPC (ts/grpc) and the explorer each map a failure in one table of their own, from its
 * status and, for the spec's exceptions (a mempool rejection is -32603, a revert is code 3), its class.
 */

/** gRPC's canonical status names (grpc/status.proto), the ones the node's failures use. */
export type FailureStatus =
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'PERMISSION_DENIED'
  | 'FAILED_PRECONDITION'
  | 'RESOURCE_EXHAUSTED'
  | 'UNAVAILABLE'
  | 'DEADLINE_EXCEEDED'
  | 'INTERNAL';

export class NodeError extends Error {
  constructor(
    message: string,
    /** What kind of failure this is, in gRPC's words (each transport maps it: docs/architecture.md, util/). */
    readonly status: FailureStatus,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A submission the ledger or the pool refuses (spec: REST 400, JSON-RPC -32603 whatever the rule). Its gRPC
 * status is INVALID_ARGUMENT, or RESOURCE_EXHAUSTED for a refusal worth retrying later (a full pool).
 */
export class InvalidTransactionError extends NodeError {
  constructor(message: string, status: 'INVALID_ARGUMENT' | 'RESOURCE_EXHAUSTED' = 'INVALID_ARGUMENT') {
    super(message, status);
  }
}

/** A request's parameters are wrong (JSON-RPC -32602). */
export class InvalidParamsError extends NodeError {
  constructor(message: string) {
    super(message, 'INVALID_ARGUMENT');
  }
}

export class NotFoundError extends NodeError {
  constructor(message = 'not found') {
    super(message, 'NOT_FOUND');
  }
}

/**
 * Below the height a node that joined by state sync starts at: a 404 that says so (issue 25: REST 404 naming the
 * earliest height), where other 404s have an empty body.
 */
export class BeforeEarliestBlockError extends NotFoundError {
  constructor(readonly earliest: number) {
    super(`block not found: this node starts at height ${earliest}`);
  }
}

export class ServerError extends NodeError {
  constructor(message: string, data?: unknown) {
    super(message, 'INTERNAL', data);
  }
}

/** EVM methods before the chain's EVM activation height (spec: -32000 "EVM not active yet"). */
export class EvmNotActiveError extends NodeError {
  constructor() {
    super('EVM not active yet', 'FAILED_PRECONDITION');
  }
}

/** A reverted eth_call / eth_estimateGas, as geth reports it: JSON-RPC code 3, revert data in `data`. */
export class ExecutionRevertedError extends NodeError {
  constructor(reason: string | null, dataHex: string) {
    super(reason ? `execution reverted: ${reason}` : 'execution reverted', 'INVALID_ARGUMENT', dataHex);
  }
}

/** Go's time.Duration.String() for whole milliseconds (geth words its EVM timeout with it): 5s, 1.5s, 300ms. */
export function goDuration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${ms / 1000}s`;
}

/** A call ran past `--rpc-evmtimeout` (geth's wording and code). */
export class EvmTimeoutError extends NodeError {
  constructor(timeoutMs: number) {
    super(`execution aborted (timeout = ${goDuration(timeoutMs)})`, 'DEADLINE_EXCEEDED');
  }
}

/** Every call worker is busy and the queue is full: 503 on REST, -32005 (limit exceeded) on JSON-RPC. */
export class EvmBusyError extends NodeError {
  constructor(message: string) {
    super(message, 'RESOURCE_EXHAUSTED');
  }
}

/** A read of state at a height whose state this node does not hold. */
export class StateUnavailableError extends NodeError {
  constructor(message: string) {
    super(message, 'FAILED_PRECONDITION');
  }
}
