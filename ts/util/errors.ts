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
