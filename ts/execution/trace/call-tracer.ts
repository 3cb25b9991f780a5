import { bytesToBig } from '../../util/index.js';
import type { StepEvent } from './types.js';

/** One frame of geth's callTracer result (quantities as 0x hex, bytes as 0x hex). */
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
  logs?: { address: string; topics: string[]; data: string; position: string }[];
}

/** The part of @ethereumjs/evm's Message the tracer reads (beforeMessage). */
export interface MessageEvent {
  depth: number;
  caller: { toString(): string };
  to?: { toString(): string };
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

/** ethereumjs error names to geth's wording (vm/errors.go). */
const GETH_ERRORS: Record<string, string> = {
  revert: 'execution reverted',
  'out of gas': 'out of gas',
  'invalid JUMP': 'invalid jump destination',
  'stack underflow': 'stack underflow',
  'stack overflow': 'stack limit reached 1024 (1023)',
  'static state change': 'write protection',
  'code store out of gas': 'contract creation code storage out of gas',
  'code size to deposit exceeds maximum code size': 'max code size exceeded',
  'create collision': 'contract address collision',
  'invalid opcode': 'invalid opcode',
  'insufficient balance': 'insufficient balance for transfer',
  'value overflow': 'value overflow',
};

export const gethError = (error: string): string => GETH_ERRORS[error] ?? error;

/** Solidity's Error(string) revert data decoded, as geth's revertReason (other data: none). */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 68 || data[0] !== 0x08 || data[1] !== 0xc3 || data[2] !== 0x79 || data[3] !== 0xa0) return undefined;
  const offset = Number(bytesToBig(data.subarray(4, 36)));
  const start = 4 + offset;
  if (start + 32 > data.length) return undefined;
  const len = Number(bytesToBig(data.subarray(start, start + 32)));
  if (start + 32 + len > data.length) return undefined;
  return Buffer.from(data.subarray(start + 32, start + 32 + len)).toString('utf8');
}

const CALL_TYPES = new Set(['CALL', 'CALLCODE', 'DELEGATECALL', 'STATICCALL', 'CREATE', 'CREATE2']);

/**
 * geth's callTracer over the EVM's message events: a frame per message (its type is the op that made it,
 * remembered from the last step of the caller), SELFDESTRUCT as a leaf frame, and with `withLog` the
 * LOG ops of each frame, dropped again when the frame (or an ancestor) fails, as geth does.
 */
export class CallTracer {
  private readonly stack: CallFrame[] = [];
  private root: CallFrame | null = null;
  private lastOp = 'CALL';

  constructor(
    private readonly opts: { onlyTopCall: boolean; withLog: boolean },
    /** The transaction's gas limit: the top frame's `gas` (the message itself gets it minus intrinsic gas). */
    private readonly txGas: bigint,
  ) {}

  step(e: StepEvent, selfdestructValue?: bigint): void {
    const name = e.opcode.name;
    if (CALL_TYPES.has(name)) this.lastOp = name;
    const frame = this.stack[this.stack.length - 1];
    if (!frame) return;
    if (name === 'SELFDESTRUCT' && !this.opts.onlyTopCall) {
      const to = `0x${e.stack[e.stack.length - 1].toString(16).padStart(40, '0')}`;
      (frame.calls ??= []).push({
        type: 'SELFDESTRUCT',
        from: e.address.toString(),
        to,
        value: qty(selfdestructValue ?? 0n),
        gas: '0x0',
        gasUsed: '0x0',
        input: '0x',
      });
    } else if (this.opts.withLog && name.startsWith('LOG') && name.length === 4) {
      const n = Number(name[3]);
      const top = e.stack.length - 1;
      const offset = Number(e.stack[top]);
      const size = Number(e.stack[top - 1]);
      const topics: string[] = [];
      for (let i = 0; i < n; i++) topics.push(`0x${e.stack[top - 2 - i].toString(16).padStart(64, '0')}`);
      const data = new Uint8Array(size);
      data.set(e.memory.subarray(offset, Math.min(offset + size, e.memory.length)));
      (frame.logs ??= []).push({
        address: e.address.toString(),
        topics,
        data: hex(data),
        position: qty(BigInt(frame.calls?.length ?? 0)),
      });
    }
  }

  enter(m: MessageEvent): void {
    const isTop = this.stack.length === 0;
    const type = isTop ? (m.to ? 'CALL' : 'CREATE') : this.lastOp;
    const frame: CallFrame = {
      type,
      from: m.caller.toString(),
      gas: qty(isTop ? this.txGas : m.gasLimit),
      gasUsed: '0x0',
      input: hex(m.data),
    };
    if (m.to) frame.to = m.to.toString();
    if (type !== 'STATICCALL') frame.value = qty(m.value);
    if (isTop) this.root = frame;
    else if (!this.opts.onlyTopCall) (this.stack[this.stack.length - 1].calls ??= []).push(frame);
    this.stack.push(frame);
  }

  exit(r: MessageResult): void {
    const frame = this.stack.pop();
    if (!frame) return;
    const ex = r.execResult;
    frame.gasUsed = qty(ex.executionGasUsed);
    if (r.createdAddress && frame.type.startsWith('CREATE')) frame.to = r.createdAddress.toString();
    if (ex.returnValue.length > 0 || !ex.exceptionError) frame.output = hex(ex.returnValue);
    if (ex.exceptionError) {
      frame.error = gethError(ex.exceptionError.error);
      if (ex.exceptionError.error === 'revert') {
        const reason = revertReason(ex.returnValue);
        if (reason !== undefined) frame.revertReason = reason;
      } else delete frame.output;
      clearLogs(frame);
    }
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
