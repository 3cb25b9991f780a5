import { accountKey, codeKey, getAccount, storageKey, type StateReader } from '../../state/index.js';
import { FEE_COLLECTOR } from '../common.js';
import type { MessageEvent, MessageResult } from './call-tracer.js';
import type { StepEvent } from './types.js';

/**
 * geth's prestateTracer account (prestate.go): balance always (also "0x0"), code and codeHash when the account
 * has code, nonce when not 0, storage when any slot is listed. In diffMode's `post` only what changed.
 */
export interface PrestateAccount {
  balance?: string;
  code?: string;
  codeHash?: string;
  nonce?: number;
  storage?: Record<string, string>;
}

/** tracerConfig of the prestateTracer, as geth's PrestateTracerConfig. */
export interface PrestateConfig {
  diffMode: boolean;
  disableCode: boolean;
  disableStorage: boolean;
  includeEmpty: boolean;
}

/** Ops whose stack names an account the tracer looks up (geth: stack top; the CALL family: the second item). */
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

/** keccak256 of no code: an account without code has it (geth's types.EmptyCodeHash). */
const EMPTY_CODE_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';
const ZERO_WORD = `0x${'0'.repeat(64)}`;
/** EIP-7702: code that delegates to another account (0xef0100 + address). */
const DELEGATION_PREFIX = Buffer.from('ef0100', 'hex');

const word = (v: bigint): string => `0x${v.toString(16).padStart(64, '0')}`;
const addressOf = (v: bigint): string => `0x${(v & ((1n << 160n) - 1n)).toString(16).padStart(40, '0')}`;
const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;

interface AccountState {
  exists: boolean;
  balance: bigint;
  nonce: bigint;
  code: Buffer | undefined;
  codeHash: string | undefined;
}

function readAccount(state: StateReader, address: string): AccountState {
  const exists = state.get(accountKey(address)) !== undefined;
  const a = getAccount(state, address);
  const code = state.get(codeKey(address));
  const hasCode = code !== undefined && code.length > 0;
  return {
    exists,
    balance: a.balance,
    nonce: a.nonce,
    code: hasCode ? code : undefined,
    codeHash: hasCode && a.codeHash ? hex(a.codeHash) : undefined,
  };
}

/** geth's emptiness (account.exists): no nonce, no code, no balance. */
const isEmpty = (a: AccountState): boolean => a.nonce === 0n && a.code === undefined && a.balance === 0n;

function readSlot(state: StateReader, address: string, slot: string): string {
  const v = state.get(storageKey(Buffer.from(address.slice(2), 'hex'), Buffer.from(slot.slice(2), 'hex')));
  return word(v ? BigInt(`0x${v.toString('hex') || '0'}`) : 0n);
}

/**
 * geth's prestateTracer: every account the transaction looks up (sender, recipient, created contracts, accounts
 * an op reads or calls, EIP-7702 delegation targets) with its state before the transaction and the storage
 * slots it read or wrote; accounts empty before it are left out (unless `includeEmpty`). `diffMode` keeps, in
 * `pre` and `post`, only the accounts and fields that changed (post: new values; storage set to zero is absent
 * from post; an account created and destroyed in the transaction appears in neither). The node's fee
 * collector (an internal account emptied after every transaction) is left out: it stands for geth's coinbase.
 */
export class PrestateTracer {
  private readonly touched = new Map<string, Set<string>>();
  private readonly created = new Set<string>();

  constructor(
    /** The state before the transaction. */
    private readonly pre: StateReader,
    private readonly cfg: PrestateConfig,
  ) {}

  private touch(address: string): Set<string> {
    let slots = this.touched.get(address);
    if (!slots) this.touched.set(address, (slots = new Set()));
    return slots;
  }

  step(e: StepEvent): void {
    const name = e.opcode.name;
    const top = e.stack.length - 1;
    if (name === 'SLOAD' || name === 'SSTORE') {
      if (top >= 0) this.touch(e.address.toString()).add(word(e.stack[top]));
    } else if (name in ADDRESS_OPS && top >= ADDRESS_OPS[name]) this.touch(addressOf(e.stack[top - ADDRESS_OPS[name]]));
  }

  enter(m: MessageEvent): void {
    this.touch(m.caller.toString());
    if (m.to) this.touch(m.to.toString());
  }

  exit(r: MessageResult): void {
    if (!r.createdAddress) return;
    const address = r.createdAddress.toString();
    this.touch(address);
    this.created.add(address);
  }

  /** The result: pre-state of every looked-up account, or `{ post, pre }` of what changed (diffMode). */
  result(post: StateReader): Record<string, unknown> {
    this.touched.delete(FEE_COLLECTOR);
    for (const address of [...this.touched.keys()]) {
      const code = this.pre.get(codeKey(address));
      if (code?.length === 23 && code.subarray(0, 3).equals(DELEGATION_PREFIX)) this.touch(hex(code.subarray(3)));
    }
    return this.cfg.diffMode ? this.diff(post) : this.prestate();
  }

  private shape(a: AccountState, storage: Record<string, string> | undefined): PrestateAccount {
    const out: PrestateAccount = { balance: `0x${a.balance.toString(16)}` };
    if (a.code && !this.cfg.disableCode) out.code = hex(a.code);
    if (a.codeHash) out.codeHash = a.codeHash;
    if (a.nonce > 0n) out.nonce = Number(a.nonce);
    if (storage && !this.cfg.disableStorage && Object.keys(storage).length > 0) out.storage = storage;
    return out;
  }

  private prestate(): Record<string, PrestateAccount> {
    const out: Record<string, PrestateAccount> = {};
    for (const [address, slots] of this.touched) {
      const a = readAccount(this.pre, address);
      if (isEmpty(a) && !this.cfg.includeEmpty) continue;
      const storage: Record<string, string> = {};
      for (const s of slots) storage[s] = readSlot(this.pre, address, s);
      out[address] = this.shape(a, storage);
    }
    return out;
  }

  private diff(post: StateReader): { post: Record<string, PrestateAccount>; pre: Record<string, PrestateAccount> } {
    const preOut: Record<string, PrestateAccount> = {};
    const postOut: Record<string, PrestateAccount> = {};
    for (const [address, slots] of this.touched) {
      const a = readAccount(this.pre, address);
      const b = readAccount(post, address);
      const empty = isEmpty(a);
      // Created and gone again (SELFDESTRUCT in its creating transaction): its pre-state only.
      if (this.created.has(address) && !b.exists) {
        if (!empty) preOut[address] = this.shape(a, undefined);
        continue;
      }
      const changed: PrestateAccount = {};
      let modified = false;
      if (a.balance !== b.balance) {
        modified = true;
        changed.balance = `0x${b.balance.toString(16)}`;
      }
      if (a.nonce !== b.nonce) {
        modified = true;
        if (b.nonce > 0n) changed.nonce = Number(b.nonce);
      }
      if ((a.codeHash ?? EMPTY_CODE_HASH) !== (b.codeHash ?? EMPTY_CODE_HASH)) {
        modified = true;
        changed.codeHash = b.codeHash ?? EMPTY_CODE_HASH;
      }
      if (!this.cfg.disableCode && !(a.code ?? Buffer.alloc(0)).equals(b.code ?? Buffer.alloc(0))) {
        modified = true;
        changed.code = hex(b.code ?? Buffer.alloc(0));
      }
      const preSlots: Record<string, string> = {};
      const postSlots: Record<string, string> = {};
      if (!this.cfg.disableStorage) {
        for (const s of slots) {
          const before = readSlot(this.pre, address, s);
          const after = readSlot(post, address, s);
          if (before === after) continue;
          modified = true;
          if (before !== ZERO_WORD) preSlots[s] = before;
          if (after !== ZERO_WORD) postSlots[s] = after;
        }
      }
      if (!modified) continue;
      if (Object.keys(postSlots).length > 0) changed.storage = postSlots;
      postOut[address] = changed;
      if (!empty) preOut[address] = this.shape(a, preSlots);
    }
    return { post: postOut, pre: preOut };
  }
}
