/**
 * geth's words for EVM failures (core/vm/errors.go) and its decoding of revert data (accounts/abi
 * UnpackRevert), for the tracers: @ethereumjs/evm names the same failures its own way.
 */
import { bytesToBig } from '../../util/index.js';

const ERR_CODE_STORE_OUT_OF_GAS = 'contract creation code storage out of gas';

/** ethereumjs error texts (their start: some carry a location after it) to geth's. */
const GETH_ERRORS: [string, string][] = [
  ['revert', 'execution reverted'],
  ['out of gas', 'out of gas'],
  ['invalid JUMP', 'invalid jump destination'],
  ['static state change', 'write protection'],
  ['code store out of gas', ERR_CODE_STORE_OUT_OF_GAS],
  ['code size to deposit exceeds maximum code size', 'max code size exceeded'],
  ['create collision', 'contract address collision'],
  ['insufficient balance', 'insufficient balance for transfer'],
  ['invalid bytecode deployed', 'invalid code: must not begin with 0xef'],
  ['initcode exceeds max initcode size', 'max initcode size exceeded'],
  ['stack underflow', 'stack underflow'],
  ['stack overflow', 'stack limit reached 1024 (1023)'],
  ['invalid opcode', 'invalid opcode'],
];

/** geth's text for an ethereumjs failure, without the failing step's details (the struct logger's words). */
export function gethError(error: string): string {
  for (const [prefix, text] of GETH_ERRORS) if (error === prefix || error.startsWith(`${prefix} `)) return text;
  return error;
}

/** geth's error when a CALL/CREATE cannot start (evm.go): the depth limit, the caller's balance. */
export const ERR_DEPTH = 'max call depth exceeded';
export const ERR_INSUFFICIENT_BALANCE = 'insufficient balance for transfer';
/** geth's call depth limit (params.CallCreateDepth); ethereumjs counts the top frame as depth 0 too. */
export const CALL_DEPTH_LIMIT = 1024;
const STACK_LIMIT = 1024;

/** Stack items an op takes and leaves ([pops, pushes]), as geth's jump table (stack_table.go) uses them. */
function stackShape(op: number): [number, number] {
  if (op >= 0x60 && op <= 0x7f) return [0, 1]; // PUSH1..PUSH32
  if (op >= 0x80 && op <= 0x8f) return [op - 0x7f, op - 0x7e]; // DUPn
  if (op >= 0x90 && op <= 0x9f) return [op - 0x8e, op - 0x8e]; // SWAPn
  if (op >= 0xa0 && op <= 0xa4) return [op - 0x9e, 0]; // LOGn
  return OP_SHAPES.get(op) ?? [0, 0];
}

/** [pops, pushes, ops] of every op outside the PUSH, DUP, SWAP and LOG ranges (no stack: [0, 0]). */
const SHAPE_GROUPS: [number, number, number[]][] = [
  [2, 1, [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18]],
  [2, 1, [0x1a, 0x1b, 0x1c, 0x1d, 0x20]],
  [3, 1, [0x08, 0x09, 0xf0]],
  [1, 1, [0x15, 0x19, 0x1e, 0x31, 0x35, 0x3b, 0x3f, 0x40, 0x49, 0x51, 0x54, 0x5c]],
  [0, 1, [0x30, 0x32, 0x33, 0x34, 0x36, 0x38, 0x3a, 0x3d, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48]],
  [0, 1, [0x4a, 0x58, 0x59, 0x5a, 0x5f]],
  [3, 0, [0x37, 0x39, 0x3e, 0x5e]],
  [4, 0, [0x3c]],
  [1, 0, [0x50, 0x56, 0xff]],
  [2, 0, [0x52, 0x53, 0x55, 0x57, 0x5d, 0xf3, 0xfd]],
  [7, 1, [0xf1, 0xf2]],
  [6, 1, [0xf4, 0xfa]],
  [4, 1, [0xf5]],
];
const OP_SHAPES = new Map<number, [number, number]>(
  SHAPE_GROUPS.flatMap(([pops, pushes, ops]) => ops.map((op): [number, [number, number]] => [op, [pops, pushes]])),
);

/** The step a frame failed on, as far as geth's error text needs it. */
export interface FailedStep {
  /** The op's byte (for an op ethereumjs does not define: the byte in the code, not 0xfe). */
  op: number;
  stackLength: number;
  /** The step's gas covered the op's cost (an out-of-gas after it was not the op's). */
  paid: boolean;
  /** RETURNDATACOPY: the return data it would read past (ethereumjs fails it as out of gas). */
  beyondReturnData?: boolean;
}

/**
 * geth's error text for a frame that failed with ethereumjs `error` on `step` (its last step, when it ran any):
 * the op named for an invalid opcode ("invalid opcode: INVALID", "invalid opcode: opcode 0xc not defined"),
 * the counts of a stack underflow or overflow, as geth's ErrInvalidOpCode, ErrStackUnderflow, ErrStackOverflow.
 */
export function vmErrorText(error: string, step: FailedStep | undefined, create: boolean): string {
  const text = gethError(error);
  if (!step) return text;
  // ethereumjs reports a creation that cannot pay for storing its code as out of gas: its RETURN ran.
  if (create && text === 'out of gas' && step.op === 0xf3 && step.paid) return ERR_CODE_STORE_OUT_OF_GAS;
  if (text === 'out of gas' && step.beyondReturnData) return 'return data out of bounds';
  if (text === 'invalid opcode') {
    return `invalid opcode: ${step.op === 0xfe ? 'INVALID' : `opcode 0x${step.op.toString(16)} not defined`}`;
  }
  const [pops, pushes] = stackShape(step.op);
  if (text === 'stack underflow') return `stack underflow (${step.stackLength} <=> ${pops})`;
  if (text.startsWith('stack limit reached')) return `stack limit reached ${step.stackLength} (${STACK_LIMIT + pops - pushes})`;
  return text;
}

const ERROR_SELECTOR = [0x08, 0xc3, 0x79, 0xa0];
const PANIC_SELECTOR = [0x4e, 0x48, 0x7b, 0x71];

/** Solidity's panic codes as geth words them (abi.panicReasons). */
const PANIC_REASONS: Record<string, string> = {
  '0': 'generic panic',
  '1': 'assert(false)',
  '17': 'arithmetic underflow or overflow',
  '18': 'division or modulo by zero',
  '33': 'enum overflow',
  '34': 'invalid encoded storage byte array accessed',
  '49': 'out-of-bounds array access; popping on an empty array',
  '50': 'out-of-bounds access of an array or bytesN',
  '65': 'out of memory',
  '81': 'uninitialized function',
};

const startsWith = (data: Uint8Array, selector: number[]): boolean => selector.every((b, i) => data[i] === b);

/**
 * geth's revertReason: revert data decoded as Error(string) or Panic(uint256) (a known panic code in words,
 * another as "unknown panic code: 0x…"); undefined for other data or an encoding that does not decode.
 */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  if (startsWith(data, PANIC_SELECTOR)) {
    if (data.length < 36) return undefined;
    const code = bytesToBig(data.subarray(4, 36));
    return PANIC_REASONS[code.toString()] ?? `unknown panic code: 0x${code.toString(16)}`;
  }
  if (!startsWith(data, ERROR_SELECTOR) || data.length < 68) return undefined;
  const offset = bytesToBig(data.subarray(4, 36));
  if (offset > BigInt(data.length)) return undefined;
  const start = 4 + Number(offset);
  if (start + 32 > data.length) return undefined;
  const len = bytesToBig(data.subarray(start, start + 32));
  if (BigInt(start + 32) + len > BigInt(data.length)) return undefined;
  return Buffer.from(data.subarray(start + 32, start + 32 + Number(len))).toString('utf8');
}
