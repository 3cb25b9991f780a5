import type { StepEvent } from './types.js';
import {
  CALL_DEPTH_LIMIT,
  ERR_DEPTH,
  ERR_INSUFFICIENT_BALANCE,
  type FailedStep,
  revertReason,
  vmErrorText,
} from './vm-errors.js';
export { gethError, revertReason } from './vm-errors.js';
import { bytesToBig } from '../../util/index.js';

/** One log of a callTracer frame (withLog): `index` in the block, `position` among the frame's calls. */
export interface CallLog {
  address: string;
  topics: string[];
  data: string;
  index: string;
  position: string;
}

/**
 * One frame of geth's callTracer result (quantities as 0x hex, bytes as 0x hex). Optional fields are absent
 * where geth's `omitempty` leaves them out: no `to` on a failed CREATE, no `output` when empty, no `value`
 * on a STATICCALL, no empty `calls`, `logs`, `error` or `revertReason`.
 */
export interface CallFrame {
  type: string;
  from: string;
  to?: string;
  value?: string;
  gas: string;
  gasUsed: string;
  input: string;
  output?: string;
  error?: string;
  revertReason?: string;
  calls?: CallFrame[];
  logs?: CallLog[];
}

/** The part of @ethereumjs/evm's Message the tracer reads (beforeMessage). */
export interface MessageEvent {
  depth: number;
  caller: { toString(): string };
  to?: { toString(): string };
  /** The code run (CALLCODE, DELEGATECALL: not `to`); a getter that throws on a creation, read only for calls. */
  codeAddress?: { toString(): string };
  value: bigint;
  data: Uint8Array;
  gasLimit: bigint;
  delegatecall: boolean;
  isStatic: boolean;
}

/** The part of EVMResult the tracer reads (afterMessage). */
export interface MessageResult {
  createdAddress?: { toString(): string };
  execResult: {
    executionGasUsed: bigint;
    returnValue: Uint8Array;
    exceptionError?: { error: string };
  };
}

const hex = (b: Uint8Array): string => `0x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')}`;
const qty = (n: bigint): string => `0x${n.toString(16)}`;
const addressOf = (v: bigint): string => `0x${(v & ((1n << 160n) - 1n)).toString(16).padStart(40, '0')}`;
/** geth's stipend added to a CALL's gas when it carries value (params.CallStipend). */
const CALL_STIPEND = 2300n;

const CALL_TYPES = new Set(['CALL', 'CALLCODE', 'DELEGATECALL', 'STATICCALL', 'CREATE', 'CREATE2']);

/** `size` bytes of memory from `offset`, zero past what the step's memory holds (memory the op expands). */
function memorySlice(memory: Uint8Array, offset: bigint, size: bigint): Uint8Array {
  const out = new Uint8Array(Number(size));
  const start = Number(offset);
  if (start < memory.length) out.set(memory.subarray(start, Math.min(start + out.length, memory.length)));
  return out;
}

/** A frame being built, with what the tracer keeps about it while it runs. */
interface OpenFrame {
  node: CallFrame;
  /** Creation code when the frame is a CREATE/CREATE2 (its code is not in the state while it runs). */
  initCode?: Uint8Array;
  /** Call value of the frame (a DELEGATECALL made from it passes it on). */
  value: bigint;
  /** The frame's last step: the failing op when the frame fails. */
  lastStep?: FailedStep;
  /** A call-type op just stepped and no message began yet: if none does, the call failed before running. */
  pendingCall?: StepEvent;
  /** A SELFDESTRUCT stepped: recorded as a frame when the frame ends without error (the op then ran). */
  pendingSelfdestruct?: CallFrame;
  /** The block's log count at the frame's start: a failed frame's logs are undone, so the count goes back. */
  logIndexAtEntry: number;
  /** Bytes of return data the frame's last call or create left (what RETURNDATACOPY may read). */
  returnDataSize: number;
}

/**
 * geth's callTracer (eth/tracers/native/call.go) over the EVM's message and step events: a frame per
 * message (its type is the op that made it), added to its parent when it ends; a frame with its error for a
 * CALL or CREATE that fails before running (depth limit, value above the balance), which ethereumjs runs no
 * message for; SELFDESTRUCT as a leaf frame; with `withLog` the logs of each frame, numbered in the block
 * and dropped again when the frame (or an ancestor) fails.
 */
export class CallTracer {
  private readonly stack: OpenFrame[] = [];
  private root: CallFrame | null = null;
  private logIndex: number;

  constructor(
    private readonly opts: { onlyTopCall: boolean; withLog: boolean },
    /** The transaction's gas limit: the top frame's `gas` (the message itself gets it minus intrinsic gas). */
    private readonly txGas: bigint,
    /** Logs of the block before this transaction (a log's `index` is its place in the block). */
    logIndexBase = 0,
  ) {
    this.logIndex = logIndexBase;
  }

  /**
   * A step of the EVM. `value` is what run.ts read from the state for it: a SELFDESTRUCT's balance, or an
   * undefined op's byte in the code (ethereumjs reports every undefined op as INVALID, 0xfe).
   */
  step(e: StepEvent, value?: bigint): void {
    const frame = this.stack[this.stack.length - 1];
    if (!frame) return;
    if (frame.pendingCall) this.failedBeforeRunning(frame);
    const name = e.opcode.name;
    let op = e.opcode.code;
    if (name === 'INVALID') op = frame.initCode ? (frame.initCode[e.pc] ?? op) : value !== undefined ? Number(value) : op;
    // One object per frame, rewritten at each step (a trace can have millions of steps).
    const last = (frame.lastStep ??= { op, stackLength: 0, paid: true });
    last.op = op;
    last.stackLength = e.stack.length;
    last.paid = (e.opcode.dynamicFee ?? BigInt(e.opcode.fee)) <= e.gasLeft;
    const s = e.stack;
    last.beyondReturnData =
      name === 'RETURNDATACOPY' && s.length >= 3 && s[s.length - 2] + s[s.length - 3] > BigInt(frame.returnDataSize);
    if (CALL_TYPES.has(name)) frame.pendingCall = e;
    else if (name === 'SELFDESTRUCT') {
      frame.pendingSelfdestruct = {
        type: 'SELFDESTRUCT',
        from: e.address.toString(),
        to: addressOf(e.stack[e.stack.length - 1]),
        value: qty(value ?? 0n),
        gas: '0x0',
        gasUsed: '0x0',
        input: '0x',
      };
    } else if (this.opts.withLog && name.startsWith('LOG') && name.length === 4) this.log(frame, e, Number(name[3]));
  }

  private log(frame: OpenFrame, e: StepEvent, n: number): void {
    const top = e.stack.length - 1;
    const topics: string[] = [];
    for (let i = 0; i < n; i++) topics.push(`0x${e.stack[top - 2 - i].toString(16).padStart(64, '0')}`);
    (frame.node.logs ??= []).push({
      address: e.address.toString(),
      topics,
      data: hex(memorySlice(e.memory, e.stack[top], e.stack[top - 1])),
      index: qty(BigInt(this.logIndex++)),
      position: qty(BigInt(frame.node.calls?.length ?? 0)),
    });
  }

  enter(m: MessageEvent): void {
    const parent = this.stack[this.stack.length - 1];
    const op = parent?.pendingCall?.opcode.name;
    if (parent) parent.pendingCall = undefined;
    const type = parent ? (op ?? 'CALL') : m.to ? 'CALL' : 'CREATE';
    // geth: `from` is the contract running the op, `to` the code called (for CALLCODE and DELEGATECALL
    // ethereumjs's message has the context as `to`, and for DELEGATECALL the context's caller as `caller`).
    let from = m.caller.toString();
    let to = m.to?.toString();
    if (type === 'DELEGATECALL' && m.to) from = m.to.toString();
    if ((type === 'DELEGATECALL' || type === 'CALLCODE') && m.codeAddress) to = m.codeAddress.toString();
    const node: CallFrame = { type, from, gas: qty(parent ? m.gasLimit : this.txGas), gasUsed: '0x0', input: hex(m.data) };
    if (to !== undefined) node.to = to;
    if (type !== 'STATICCALL') node.value = qty(m.value);
    const create = type === 'CREATE' || type === 'CREATE2';
    this.stack.push({
      node,
      initCode: create ? m.data : undefined,
      value: m.value,
      logIndexAtEntry: this.logIndex,
      returnDataSize: 0,
    });
  }

  exit(r: MessageResult): void {
    const frame = this.stack.pop();
    if (!frame) return;
    const { node } = frame;
    const ex = r.execResult;
    const failed = ex.exceptionError !== undefined;
    // A call op as the frame's last step that started no message failed before running (a failed op fails its frame).
    if (frame.pendingCall && !failed) this.failedBeforeRunning(frame);
    if (frame.pendingSelfdestruct && !failed && !this.opts.onlyTopCall) (node.calls ??= []).push(frame.pendingSelfdestruct);
    node.gasUsed = qty(ex.executionGasUsed);
    const create = node.type === 'CREATE' || node.type === 'CREATE2';
    if (!ex.exceptionError) {
      if (create && r.createdAddress) node.to = r.createdAddress.toString();
      if (ex.returnValue.length > 0) node.output = hex(ex.returnValue);
    } else {
      node.error = vmErrorText(ex.exceptionError.error, frame.lastStep, create);
      if (create) delete node.to;
      if (ex.exceptionError.error === 'revert' && ex.returnValue.length > 0) {
        node.output = hex(ex.returnValue);
        const reason = revertReason(ex.returnValue);
        if (reason) node.revertReason = reason;
      }
      clearLogs(node);
      this.logIndex = frame.logIndexAtEntry;
    }
    const parent = this.stack[this.stack.length - 1];
    if (!parent) this.root = node;
    else {
      // geth's return data after a call: its output or revert data; after a create: only revert data.
      const kept = ex.exceptionError ? ex.exceptionError.error === 'revert' : !create;
      parent.returnDataSize = kept ? ex.returnValue.length : 0;
      if (!this.opts.onlyTopCall) (parent.node.calls ??= []).push(node);
    }
  }

  /** The frame geth records for a call-type op of `frame` that started no message: its error, no gas used. */
  private failedBeforeRunning(frame: OpenFrame): void {
    const e = frame.pendingCall;
    frame.pendingCall = undefined;
    frame.returnDataSize = 0;
    if (!e || this.opts.onlyTopCall) return;
    const type = e.opcode.name;
    const s = e.stack;
    const arg = (i: number): bigint => s[s.length - 1 - i] ?? 0n;
    const available = e.gasLeft - (e.opcode.dynamicFee ?? BigInt(e.opcode.fee));
    const cap = available - available / 64n;
    const create = type === 'CREATE' || type === 'CREATE2';
    const withValue = type === 'CALL' || type === 'CALLCODE';
    const value = create || withValue ? arg(create ? 0 : 2) : frame.value;
    let gas = create ? cap : arg(0) < cap ? arg(0) : cap;
    if (withValue && value > 0n) gas += CALL_STIPEND;
    const [offset, size] = create ? [arg(1), arg(2)] : withValue ? [arg(3), arg(4)] : [arg(2), arg(3)];
    const node: CallFrame = { type, from: e.address.toString(), gas: qty(gas), gasUsed: '0x0', input: '0x' };
    if (!create) node.to = addressOf(arg(1));
    if (type !== 'STATICCALL') node.value = qty(value);
    node.input = hex(memorySlice(e.memory, offset, size));
    node.error = e.depth >= CALL_DEPTH_LIMIT ? ERR_DEPTH : ERR_INSUFFICIENT_BALANCE;
    (frame.node.calls ??= []).push(node);
  }

  /** The tree, with the top frame's gasUsed as the transaction's (intrinsic gas and refunds included). */
  result(txGasUsed: bigint): CallFrame {
    const root = this.root;
    if (!root) throw new Error('callTracer: no message was executed');
    root.gasUsed = qty(txGasUsed);
    return root;
  }
}

function clearLogs(frame: CallFrame): void {
  delete frame.logs;
  for (const c of frame.calls ?? []) clearLogs(c);
}
