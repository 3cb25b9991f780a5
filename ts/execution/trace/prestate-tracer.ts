import { accountKey, codeKey, getAccount, storageKey, type StateReader } from '../../state/index.js';
import { FEE_COLLECTOR } from '../common.js';
import type { MessageEvent, MessageResult } from './call-tracer.js';
import type { StepEvent } from './types.js';

/** geth's prestateTracer account shape: balance hex, nonce integer (omitted when 0), code and storage when present. */
export interface PrestateAccount {
  balance?: string;
  nonce?: number;
  code?: string;
  storage?: Record<string, string>;
}

const ADDRESS_OPS: Record<string, number> = {
  BALANCE: 0,
  EXTCODESIZE: 0,
  EXTCODECOPY: 0,
  EXTCODEHASH: 0,
  SELFDESTRUCT: 0,
  CALL: 1,
  CALLCODE: 1,
  DELEGATECALL: 1,
  STATICCALL: 1,
};

const word = (v: bigint): string => `0x${v.toString(16).padStart(64, '0')}`;
const addressOf = (v: bigint): string => `0x${(v & ((1n << 160n) - 1n)).toString(16).padStart(40, '0')}`;

interface AccountState {
  exists: boolean;
  balance: bigint;
  nonce: bigint;
  code: Buffer | undefined;
}

function readAccount(state: StateReader, address: string): AccountState {
  const exists = state.get(accountKey(address)) !== undefined;
  const a = getAccount(state, address);
  return { exists, balance: a.balance, nonce: a.nonce, code: state.get(codeKey(address)) };
}

function readSlot(state: StateReader, address: string, slot: string): string {
  const v = state.get(storageKey(Buffer.from(address.slice(2), 'hex'), Buffer.from(slot.slice(2), 'hex')));
  return word(v ? BigInt(`0x${v.toString('hex') || '0'}`) : 0n);
}

function shape(a: AccountState, storage: Record<string, string> | undefined): PrestateAccount {
  const out: PrestateAccount = { balance: `0x${a.balance.toString(16)}` };
  if (a.nonce > 0n) out.nonce = Number(a.nonce);
  if (a.code && a.code.length > 0) out.code = `0x${a.code.toString('hex')}`;
  if (storage && Object.keys(storage).length > 0) out.storage = storage;
  return out;
}

/**
 * geth's prestateTracer: every account the transaction touches (sender, recipient, created contracts,
 * addresses an op reads or calls) with its state before the transaction, and the storage slots it
 * read or wrote. `diffMode` compares with the state after and keeps only what changed. The node's fee
 * collector (an internal account emptied after every transaction) is left out.
 */
export class PrestateTracer {
  private readonly touched = new Map<string, Set<string>>();

  constructor(
    /** The state before the transaction. */
    private readonly pre: StateReader,
    private readonly diffMode: boolean,
  ) {}

  private touch(address: string): Set<string> {
    let slots = this.touched.get(address);
    if (!slots) this.touched.set(address, (slots = new Set()));
    return slots;
  }

  step(e: StepEvent): void {
    const name = e.opcode.name;
    const top = e.stack.length - 1;
    if (name === 'SLOAD' || name === 'SSTORE') this.touch(e.address.toString()).add(word(e.stack[top]));
    else if (name in ADDRESS_OPS && top >= ADDRESS_OPS[name]) this.touch(addressOf(e.stack[top - ADDRESS_OPS[name]]));
  }

  enter(m: MessageEvent): void {
    this.touch(m.caller.toString());
    if (m.to) this.touch(m.to.toString());
  }

  exit(r: MessageResult): void {
    if (r.createdAddress) this.touch(r.createdAddress.toString());
  }

  /** The result: pre-state of every touched account, or `{ pre, post }` of what changed (diffMode). */
  result(post: StateReader): Record<string, unknown> {
    this.touched.delete(FEE_COLLECTOR);
    if (!this.diffMode) {
      const out: Record<string, PrestateAccount> = {};
      for (const [address, slots] of this.touched) {
        const storage: Record<string, string> = {};
        for (const s of slots) storage[s] = readSlot(this.pre, address, s);
        out[address] = shape(readAccount(this.pre, address), storage);
      }
      return out;
    }
    const pre: Record<string, PrestateAccount> = {};
    const postOut: Record<string, PrestateAccount> = {};
    for (const [address, slots] of this.touched) {
      const a = readAccount(this.pre, address);
      const b = readAccount(post, address);
      if (!a.exists && !b.exists) continue;
      const preSlots: Record<string, string> = {};
      const postSlots: Record<string, string> = {};
      for (const s of slots) {
        const before = readSlot(this.pre, address, s);
        const after = readSlot(post, address, s);
        if (before === after) continue;
        preSlots[s] = before;
        if (BigInt(after) !== 0n) postSlots[s] = after;
      }
      const codeChanged = !(a.code ?? Buffer.alloc(0)).equals(b.code ?? Buffer.alloc(0));
      const changed =
        a.exists !== b.exists ||
        a.balance !== b.balance ||
        a.nonce !== b.nonce ||
        codeChanged ||
        Object.keys(preSlots).length > 0;
      if (!changed) continue;
      if (a.exists) pre[address] = shape(a, preSlots);
      if (!b.exists) continue;
      const diff: PrestateAccount = {};
      if (a.balance !== b.balance) diff.balance = `0x${b.balance.toString(16)}`;
      if (a.nonce !== b.nonce) diff.nonce = Number(b.nonce);
      if (codeChanged && b.code) diff.code = `0x${b.code.toString('hex')}`;
      if (Object.keys(postSlots).length > 0) diff.storage = postSlots;
      postOut[address] = diff;
    }
    return { post: postOut, pre };
  }
}
