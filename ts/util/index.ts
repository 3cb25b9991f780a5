/**
 * The door of ts/util/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export { formatUnits, groupThousands } from './amounts.js';
export {
  InvalidTransactionError,
  NodeError,
  type FailureStatus,
  ServerError,
  EvmNotActiveError,
  InvalidParamsError,
  goDuration,
  NotFoundError,
  BeforeEarliestBlockError,
  EvmBusyError,
  EvmTimeoutError,
  ExecutionRevertedError,
  StateUnavailableError,
} from './errors.js';
export { fromHex, u32be, u64be, isAddress, to0x, toHex, bigToBytes, bytesToBig, isHash, normHash, qty } from './hex.js';
export { asUint, RawJson, parseJsonExact, stringifyExact } from './json.js';
export { rlpIntHex, rlpListHex, rlpStrHex, rlpBytesList } from './rlp-hex.js';
export { checkRlp, decodeRlp, RlpDecodeError, type RlpItem } from './rlp-bounded.js';
export { NODE_VERSION } from './version.js';
export { type ObjectMemo, objectMemo } from './memo.js';
