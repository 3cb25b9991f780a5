/**
 * Every node error class through the three transport tables: REST's HTTP status (api/error-status.ts), the
 * JSON-RPC code (rpc/error-codes.ts) and the gRPC status (grpc/errors.ts). The classes carry only a
 * transport-neutral status; these are the answers clients see, pinned class by class.
 */
import test from 'ava';
import { httpStatusOf } from '../../ts/api/index.js';
import { HistoryUnavailableError, InvalidBlockError, NoSuchHeightError, StaleStateViewError } from '../../ts/chain/index.js';
import {
  CallPoolBusyError,
  MalformedRawTransactionError,
  TraceOutputTooLargeError,
  TraceTimeoutError,
} from '../../ts/execution/index.js';
import { GrpcStatus, REJECT_REASON_TRAILER, toGrpcError } from '../../ts/grpc/index.js';
import { NotActiveError, TransactionShapeError, TxRuleError } from '../../ts/ledger/index.js';
import { RpcError, rpcCodeOf } from '../../ts/rpc/index.js';
import { StateIndexBuildingError } from '../../ts/indexes/index.js';
import {
  EvmBusyError,
  EvmNotActiveError,
  EvmTimeoutError,
  ExecutionRevertedError,
  InvalidParamsError,
  InvalidTransactionError,
  type NodeError,
  NotFoundError,
  ServerError,
  StateUnavailableError,
} from '../../ts/util/index.js';

const { INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, RESOURCE_EXHAUSTED, UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL } =
  GrpcStatus;

/** [error, HTTP status, JSON-RPC code, gRPC status] */
const CASES: [NodeError, number, number, GrpcStatus][] = [
  [new InvalidTransactionError('Invalid transaction: amount must be > 0'), 400, -32603, INVALID_ARGUMENT],
  [new TxRuleError('Invalid nonce: expected 2, got 1', 'nonce'), 400, -32603, INVALID_ARGUMENT],
  // A full pool: a rejection on REST and JSON-RPC like any other, worth retrying on gRPC.
  [new TxRuleError('mempool is full', 'pool_full'), 400, -32603, RESOURCE_EXHAUSTED],
  [new MalformedRawTransactionError('invalid raw transaction: not RLP', 'integrity'), 400, -32603, INVALID_ARGUMENT],
  [new InvalidParamsError('invalid address'), 400, -32602, INVALID_ARGUMENT],
  // Not a transaction at all: bad params on JSON-RPC (native_sendTransaction), a rejection elsewhere.
  [new TransactionShapeError('Invalid transaction: missing field nonce'), 400, -32602, INVALID_ARGUMENT],
  [new RpcError(-32601, 'method not allowed for this key'), 400, -32601, INVALID_ARGUMENT],
  [new NotFoundError(), 404, -32000, NOT_FOUND],
  [new NoSuchHeightError(9, 3), 404, -32000, NOT_FOUND],
  [new ServerError('filter not found'), 500, -32000, INTERNAL],
  [new EvmNotActiveError(), 400, -32000, FAILED_PRECONDITION],
  [new NotActiveError('token operations are not active on this chain yet'), 400, -32000, FAILED_PRECONDITION],
  [new StateUnavailableError('state at height 1 is not available'), 400, -32000, FAILED_PRECONDITION],
  [new HistoryUnavailableError(1, 5), 400, -32000, FAILED_PRECONDITION],
  [new ExecutionRevertedError('no', '0x08c379a0'), 400, 3, INVALID_ARGUMENT],
  [new EvmTimeoutError(300), 503, -32000, DEADLINE_EXCEEDED],
  [new EvmBusyError('too many EVM calls in progress'), 503, -32005, RESOURCE_EXHAUSTED],
  [new CallPoolBusyError(2), 503, -32005, RESOURCE_EXHAUSTED],
  [new StateIndexBuildingError(10), 503, -32000, UNAVAILABLE],
  [new StaleStateViewError('state view read after release'), 409, -32000, INVALID_ARGUMENT],
  [new InvalidBlockError('state_root', 4, 'mismatch'), 400, -32000, INVALID_ARGUMENT],
  [new TraceTimeoutError(), 503, -32000, DEADLINE_EXCEEDED],
  [new TraceOutputTooLargeError(), 400, -32000, INVALID_ARGUMENT],
];

for (const [err, http, rpc, grpc] of CASES) {
  test(`${err.name}: HTTP ${http}, JSON-RPC ${rpc}, gRPC ${GrpcStatus[grpc]}`, (t) => {
    t.is(httpStatusOf(err), http);
    t.is(rpcCodeOf(err), rpc);
    const { error, unexpected } = toGrpcError(err);
    t.is(error.code, grpc);
    t.is(error.message, err.message);
    t.false(unexpected);
  });
}

test('a refused transaction names its rule in a gRPC trailer; a bug is INTERNAL with a fixed message', (t) => {
  t.deepEqual(toGrpcError(new TxRuleError('mempool is full', 'pool_full')).error.metadata, {
    [REJECT_REASON_TRAILER]: 'pool_full',
  });
  t.deepEqual(toGrpcError(new NotFoundError()).error.metadata, {});
  const bug = toGrpcError(new TypeError('x is undefined'));
  t.is(bug.error.code, INTERNAL);
  t.is(bug.error.message, 'internal error');
  t.true(bug.unexpected);
});
