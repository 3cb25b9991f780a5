/**
 * Errors as named classes carrying both their HTTP status and JSON-RPC code, so REST, JSON-RPC
 * and gRPC each map them in one place.
 */
export class NodeError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number,
    readonly rpcCode: number,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A submission the ledger refuses (400 / -32603 per spec: mempool rejection is an internal error code). */
export class InvalidTransactionError extends NodeError {
  constructor(message: string) {
    super(message, 400, -32603);
  }
}

export class InvalidParamsError extends NodeError {
  constructor(message: string) {
    super(message, 400, -32602);
  }
}

export class NotFoundError extends NodeError {
  constructor(message = 'not found') {
    super(message, 404, -32000);
  }
}

export class ServerError extends NodeError {
  constructor(message: string, data?: unknown) {
    super(message, 500, -32000, data);
  }
}

/** EVM methods before the chain's EVM activation height (spec: -32000 "EVM not active yet"). */
export class EvmNotActiveError extends NodeError {
  constructor() {
    super('EVM not active yet', 400, -32000);
  }
}

/** A reverted eth_call / eth_estimateGas, as geth reports it: code 3, revert data in `data`. */
export class ExecutionRevertedError extends NodeError {
  constructor(reason: string | null, dataHex: string) {
    super(reason ? `execution reverted: ${reason}` : 'execution reverted', 400, 3, dataHex);
  }
}

/** Go's time.Duration.String() for whole milliseconds (geth words its EVM timeout with it): 5s, 1.5s, 300ms. */
export function goDuration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${ms / 1000}s`;
}

/** A call ran past `--rpc-evmtimeout` (geth's wording and code). */
export class EvmTimeoutError extends NodeError {
  constructor(timeoutMs: number) {
    super(`execution aborted (timeout = ${goDuration(timeoutMs)})`, 503, -32000);
  }
}

/** Every call worker is busy and the queue is full: 503 on REST, -32005 (limit exceeded) on JSON-RPC. */
export class EvmBusyError extends NodeError {
  constructor(message: string) {
    super(message, 503, -32005);
  }
}

/** A read of state at a height whose state this node does not hold (gRPC FAILED_PRECONDITION). */
export class StateUnavailableError extends NodeError {
  constructor(message: string) {
    super(message, 400, -32000);
  }
}
