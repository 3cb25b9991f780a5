import { RawJson } from '../../util/index.js';
import { type StepEvent, type StructLogSink, TraceOutputTooLargeError, type TraceOptions } from './types.js';

/** Bytes as hex without 0x (geth's `%x`: memory words, storage keys and values, returnValue). */
function bareHex(b: Uint8Array, from = 0, to = b.length): string {
  return Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('hex');
}

/**
 * Memory as a JSON array of 64-hex words: one native hex conversion, then slices of that flat string
 * (building it a character at a time made deep string ropes: ~30x slower on a loop's trace).
 */
function memoryWords(m: Uint8Array): string {
  const hex = bareHex(m, 0, m.length - (m.length % 32));
  const words: string[] = new Array(hex.length / 64);
  for (let i = 0; i < words.length; i++) words[i] = `"${hex.slice(i * 64, i * 64 + 64)}"`;
  return `[${words.join(',')}]`;
}

/**
 * The JSON of each step's stack and memory, reusing the previous step's text for what did not change: an op
 * changes the top few stack items and rarely the memory, and hex-encoding every item of every step was the
 * logger's largest cost after the EVM's own.
 */
class StepEncoder {
  private stack: bigint[] = [];
  private readonly items: string[] = [];
  private memory: Uint8Array = new Uint8Array(0);
  private memoryText = '[]';

  stackJson(stack: bigint[]): string {
    const prev = this.stack;
    const items = this.items;
    const bottom = Math.min(stack.length, prev.length);
    let same = 0;
    while (same < bottom && stack[same] === prev[same]) same++;
    items.length = stack.length;
    for (let i = same; i < stack.length; i++) items[i] = `"0x${stack[i].toString(16)}"`;
    // The event's stack is a copy made for this step: kept as is.
    this.stack = stack;
    return `[${items.join(',')}]`;
  }

  memoryJson(memory: Uint8Array): string {
    const prev = this.memory;
    const same = prev.length === memory.length && Buffer.from(prev.buffer, prev.byteOffset, prev.length).equals(memory);
    if (!same) {
      this.memoryText = memoryWords(memory);
      // The event's memory is a copy made for this step.
      this.memory = memory;
    }
    return this.memoryText;
  }
}

const word = (v: bigint): string => v.toString(16).padStart(64, '0');

/** geth names where @ethereumjs/evm's differ (0x44 after the merge). */
const GETH_OP_NAMES: Record<string, string> = { PREVRANDAO: 'DIFFICULTY' };

/**
 * Ops whose gasCost includes the gas handed to the callee: geth's opCall* dynamic gas adds callGasTemp;
 * for CREATE/CREATE2 Hardhat (the tests' oracle) reports it too.
 */
const CALL_OPS = new Set(['CALL', 'CALLCODE', 'DELEGATECALL', 'STATICCALL', 'CREATE', 'CREATE2']);

/** Bytes per buffer of struct-log text (a step is written into one buffer whole). */
const CHUNK_BYTES = 1 << 20;
/** The first buffer: most traces are short (an ERC-20 transfer is ~0.1 MB); buffers double up to CHUNK_BYTES. */
const FIRST_CHUNK_BYTES = 64 << 10;

/**
 * The struct logs' JSON text in 1 MB buffers: about one byte of memory per byte of output, where keeping
 * each step as a string (a rope of its parts) cost more than twice that.
 */
class TextChunks {
  private readonly full: Buffer[] = [];
  private current = Buffer.allocUnsafe(FIRST_CHUNK_BYTES);
  private used = 0;

  /** With a sink, each full buffer is handed over instead of kept (streamed answers). */
  constructor(private readonly sink?: StructLogSink) {}

  /** Append ASCII text (every field of a step is ASCII: hex, numbers, op names, JSON-escaped errors). */
  append(text: string): void {
    if (this.used + text.length > this.current.length) {
      this.hand(this.current.subarray(0, this.used));
      const next = Math.min(CHUNK_BYTES, this.current.length * 2);
      this.current = Buffer.allocUnsafe(Math.max(next, text.length));
      this.used = 0;
    }
    this.used += this.current.write(text, this.used, 'latin1');
  }

  private hand(b: Buffer): void {
    if (!this.sink) this.full.push(b);
    else if (b.length > 0) this.sink.chunk(b);
  }

  /** Hand what is left to the sink (streamed answers). */
  flush(): void {
    this.hand(this.current.subarray(0, this.used));
    this.current = Buffer.allocUnsafe(0);
    this.used = 0;
  }

  text(): string {
    const parts = [...this.full, this.current.subarray(0, this.used)].map((b) => b.toString('latin1'));
    this.full.length = 0;
    return parts.join('');
  }
}

/** The CALL-family step just logged, whose gasCost gets the callee's gas once its message starts. */
interface PendingCall {
  head: string;
  tail: string;
  cost: bigint;
  /** The stipend ethereumjs adds to the callee's gas limit for a value-carrying CALL/CALLCODE (not charged). */
  stipend: bigint;
}

/**
 * geth's struct logger: one JSON object per executed op, produced as text while the EVM runs so the
 * output cap is counted exactly and no second serialization pass is needed. Field order and encodings
 * follow geth's `StructLogRes`: stack as 0x-quantities, memory as 64-hex words, storage as 64-hex maps.
 */
export class StructLogger {
  private readonly out: TextChunks;
  private count = 0;
  /** The latest step, kept as text until the next one: a message start or a fault may still change it. */
  private last: string | null = null;
  private bytes = 0;
  /** Storage slots touched so far, per contract address (geth shows the current contract's map). */
  private readonly storage = new Map<string, Map<string, string>>();
  private pendingCall: PendingCall | null = null;
  private lastDepth = 0;
  /** The return data buffer of each depth: the output of the last call it made. */
  private readonly returnData = new Map<number, Uint8Array>();
  private readonly encoder = new StepEncoder();

  constructor(private readonly opts: TraceOptions) {
    this.out = new TextChunks(opts.sink);
  }

  /** Record one step; `storageValue` is the slot's current value for SLOAD (read by the caller). */
  step(e: StepEvent, storageValue?: bigint): void {
    const name = GETH_OP_NAMES[e.opcode.name] ?? e.opcode.name;
    const depth = e.depth + 1;
    this.pendingCall = null;
    const head = `{"pc":${e.pc},"op":"${name}","gas":${e.gasLeft},"gasCost":`;
    const cost = e.opcode.dynamicFee ?? BigInt(e.opcode.fee);
    let tail = `,"depth":${depth}`;
    if (!this.opts.disableStack) tail += `,"stack":${this.encoder.stackJson(e.stack)}`;
    if (this.opts.enableMemory) tail += `,"memory":${this.encoder.memoryJson(e.memory)}`;
    if (!this.opts.disableStorage && (name === 'SLOAD' || name === 'SSTORE')) tail += `,"storage":${this.touch(e, storageValue)}`;
    if (e.gasRefund > 0n) tail += `,"refund":${e.gasRefund}`;
    const returnData = this.opts.enableReturnData ? this.returnData.get(depth) : undefined;
    if (returnData && returnData.length > 0) tail += `,"returnData":"0x${bareHex(returnData)}"`;
    this.push(`${head}${cost}${tail}}`);
    this.lastDepth = depth;
    if (CALL_OPS.has(name)) {
      const value = name === 'CALL' || name === 'CALLCODE' ? e.stack[e.stack.length - 3] : 0n;
      this.pendingCall = { head, tail, cost, stipend: value > 0n ? 2300n : 0n };
    }
  }

  /** A message starts: if a CALL-family op just ran, its gasCost includes the callee's gas (geth). */
  messageStarted(gasLimit: bigint): void {
    const p = this.pendingCall;
    this.pendingCall = null;
    if (!p || this.last === null) return;
    this.replaceLast(`${p.head}${p.cost + gasLimit - p.stipend}${p.tail}}`);
  }

  /** A message at `depth` returned: its output is its caller's return data buffer. */
  returned(depth: number, output: Uint8Array): void {
    if (this.opts.enableReturnData) this.returnData.set(depth - 1, output);
  }

  /**
   * A frame ended with an error: geth puts it on the failing step (the frame's last). A REVERT step
   * carries none: it executed, and geth logs a step with an error only when the op itself could not run.
   */
  fault(depth: number, error: string): void {
    if (error === 'execution reverted') return;
    const text = this.last;
    if (text === null || this.lastDepth !== depth || text.includes('"error":')) return;
    this.replaceLast(`${text.slice(0, -1)},"error":${JSON.stringify(error)}}`);
  }

  private replaceLast(text: string): void {
    this.bytes += text.length - (this.last?.length ?? 0);
    this.last = text;
  }

  private flushLast(): void {
    if (this.last === null) return;
    this.out.append(this.count++ === 0 ? this.last : `,${this.last}`);
    this.last = null;
  }

  private touch(e: StepEvent, storageValue: bigint | undefined): string {
    const addr = e.address.toString();
    let slots = this.storage.get(addr);
    if (!slots) this.storage.set(addr, (slots = new Map()));
    const top = e.stack.length - 1;
    const key = word(e.stack[top]);
    if (e.opcode.name === 'SLOAD') slots.set(key, word(storageValue ?? 0n));
    else slots.set(key, word(e.stack[top - 1]));
    let s = '{';
    for (const [k, v] of slots) s += `${s.length > 1 ? ',' : ''}"${k}":"${v}"`;
    return `${s}}`;
  }

  private push(text: string): void {
    this.bytes += text.length + 1;
    if (this.bytes > this.opts.outputCap) throw new TraceOutputTooLargeError();
    this.flushLast();
    this.last = text;
  }

  /**
   * The top-level result: gas used, failure, output (hex without 0x, as geth) and the logs; with a sink the
   * logs went there and the result has the other fields only.
   */
  result(gasUsed: bigint, failed: boolean, returnValue: Uint8Array): Record<string, unknown> {
    this.flushLast();
    const top = { gas: Number(gasUsed), failed, returnValue: bareHex(returnValue) };
    if (this.opts.sink) {
      this.out.flush();
      return top;
    }
    return { ...top, structLogs: new RawJson(`[${this.out.text()}]`) };
  }

  get outputBytes(): number {
    return this.bytes;
  }
}
