/**
 * The logs of one simulated call with eth_simulateV1's `traceTransfers` (geth's internal/ethapi/logtracer.go):
 * every value transfer of a CALL or CREATE (the call's own value included) is a log of the ERC-7528 address
 * with `Transfer(address,address,uint256)`'s topics, in order among the contract logs (a SELFDESTRUCT's
 * balance too); a failed frame drops its logs and its children's.
 */
import type { VM } from '@ethereumjs/vm';

/** A log as the simulation reports it (lower-case 0x address, 32-byte topics). */
export interface SimLog {
  address: string;
  topics: Uint8Array[];
  data: Uint8Array;
}

/** ERC-7528: the pseudo-address of the chain's native coin. */
export const NATIVE_TRANSFER_ADDRESS = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
/** keccak256("Transfer(address,address,uint256)"). */
const TRANSFER_TOPIC = Buffer.from('ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', 'hex');

const word = (n: bigint): Uint8Array => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
const addressWord = (a: string): Uint8Array => Buffer.from(a.slice(2).padStart(64, '0'), 'hex');

interface Step {
  opcode: { name: string };
  stack: bigint[];
  memory: Uint8Array;
  address: { toString(): string };
}
interface Message {
  caller: { toString(): string; equals?(o: unknown): boolean };
  to?: { toString(): string };
  codeAddress?: { toString(): string };
  value: bigint;
  delegatecall: boolean;
}
interface Result {
  execResult: { exceptionError?: unknown };
}

/** Bytes [offset, offset + size) of memory, zeros past its end (the op expands memory itself). */
function memorySlice(memory: Uint8Array, offset: bigint, size: bigint): Uint8Array {
  const out = new Uint8Array(Number(size));
  const start = Number(offset);
  if (start < memory.length) out.set(memory.subarray(start, Math.min(memory.length, start + out.length)));
  return out;
}

/** Collects one call's logs and transfers from a VM's events until `detach()`; `logs()` after the run. */
export class TransferLogCollector {
  private readonly frames: SimLog[][] = [];
  /** Transfer logs of CREATE frames, whose address is known once the contract exists. */
  private readonly pendingCreate: SimLog[] = [];
  private result: SimLog[] = [];
  private readonly listeners: [string, (...a: never[]) => void][];

  constructor(
    private readonly vm: VM,
    /** The balance of an account now (a SELFDESTRUCT sends all of it). */
    private readonly balanceOf: (address: Step['address']) => Promise<bigint>,
  ) {
    this.listeners = [
      ['beforeMessage', (m: Message) => this.enter(m)],
      ['newContract', (e: { address: { toString(): string } }) => this.created(e.address.toString())],
      ['afterMessage', (r: Result) => this.exit(r)],
      // Two arguments: the EVM waits for `done` (a SELFDESTRUCT reads the balance it sends first).
      ['step', (s: Step, done: () => void) => this.step(s, done)],
    ];
    for (const [name, fn] of this.listeners) vm.evm.events?.on(name as never, fn as never);
  }

  private enter(m: Message): void {
    this.frames.push([]);
    if (m.value <= 0n || m.delegatecall) return;
    const from = m.caller.toString().toLowerCase();
    const to = m.to?.toString().toLowerCase();
    // CALLCODE runs another contract's code with value moved from the caller to itself: not a transfer (geth).
    if (to === from && m.codeAddress && m.codeAddress.toString().toLowerCase() !== to) return;
    const log: SimLog = {
      address: NATIVE_TRANSFER_ADDRESS,
      topics: [TRANSFER_TOPIC, addressWord(from), addressWord(to ?? '0x')],
      data: word(m.value),
    };
    if (to === undefined) this.pendingCreate.push(log);
    this.frames[this.frames.length - 1].push(log);
  }

  private created(address: string): void {
    const log = this.pendingCreate.pop();
    if (log) log.topics[2] = addressWord(address.toLowerCase());
  }

  private step(s: Step, done: () => void): void {
    const name = s.opcode.name;
    if (name === 'SELFDESTRUCT') {
      const frame = this.frames[this.frames.length - 1];
      const beneficiary = `0x${s.stack[s.stack.length - 1].toString(16).padStart(40, '0')}`;
      this.balanceOf(s.address).then(
        (value) => {
          if (value > 0n && frame) {
            const from = s.address.toString().toLowerCase();
            frame.push({
              address: NATIVE_TRANSFER_ADDRESS,
              topics: [TRANSFER_TOPIC, addressWord(from), addressWord(beneficiary)],
              data: word(value),
            });
          }
          done();
        },
        () => done(),
      );
      return;
    }
    done();
    if (!name.startsWith('LOG')) return;
    const n = Number(name.slice(3));
    const st = s.stack;
    const top = st.length - 1;
    if (top + 1 < 2 + n) return;
    const topics = Array.from({ length: n }, (_, i) => word(st[top - 2 - i]));
    const log: SimLog = {
      address: s.address.toString().toLowerCase(),
      topics,
      data: memorySlice(s.memory, st[top], st[top - 1]),
    };
    this.frames[this.frames.length - 1]?.push(log);
  }

  private exit(r: Result): void {
    const frame = this.frames.pop() ?? [];
    const failed = r.execResult.exceptionError !== undefined;
    const parent = this.frames[this.frames.length - 1];
    if (parent) {
      if (!failed) parent.push(...frame);
    } else this.result = failed ? [] : frame;
  }

  logs(): SimLog[] {
    return this.result;
  }

  detach(): void {
    for (const [name, fn] of this.listeners) this.vm.evm.events?.off(name as never, fn as never);
  }
}
