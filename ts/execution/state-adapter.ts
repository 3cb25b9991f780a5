import type { StateManagerInterface } from '@ethereumjs/common';
import { Account, type Address, KECCAK256_NULL, KECCAK256_RLP } from '@ethereumjs/util';
import { keccak256 } from '../crypto/index.js';
import {
  NS,
  accountKey,
  codeKey,
  decodeAccount,
  encodeAccount,
  storageKey,
  type KeyStr,
  type StateOverlay,
  type StateReader,
} from '../state/index.js';

const EMPTY = new Uint8Array(0);
type Journal = Map<KeyStr, Buffer | null | undefined>;

/**
 * What the adapter reads under its overlay: the committed store (block execution), a snapshot of it
 * (calls), or, in a call worker, a view that fetches values from the main thread by message.
 */
export interface EvmBaseState extends StateReader {
  /** Keys of every stored slot of a contract (address as 20 raw bytes in latin1). */
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr> | Promise<ReadonlySet<KeyStr>>;
  /**
   * Makes get(key) answer (a remote view loads the value first). Absent when every key is readable at
   * once, so block execution pays nothing for it.
   */
  fetch?(key: KeyStr): Promise<void>;
  /**
   * Runs `fn`, which reads this state synchronously (native operations, tracers), until it ran with every
   * value it reads at hand: a remote view runs it, fetches the keys it missed in one round trip, and runs it
   * again. `fn` must have no effect outside what it returns. Absent on a local state (one run).
   */
  runSync?<T>(fn: () => T): Promise<T>;
  /** Reads these keys ahead in one batch (a store whose values are on disk); absent where reads are cheap. */
  prefetch?(keys: Iterable<KeyStr>): void;
}

const EMPTY_CODE_HASH = Buffer.from(KECCAK256_NULL);

/**
 * Account keys per address object: the interpreter reads its contract's account again after every SSTORE, with
 * the same Address, and the key is built afresh each time otherwise (an allocation and a latin1 string).
 */
const accountKeys = new WeakMap<Uint8Array, KeyStr>();
function accountKeyOf(address: Address): KeyStr {
  let k = accountKeys.get(address.bytes);
  if (k === undefined) {
    k = accountKey(address.bytes);
    accountKeys.set(address.bytes, k);
  }
  return k;
}
const isEmptyCodeHash = (h: Uint8Array): boolean => EMPTY_CODE_HASH.equals(h);

/**
 * The EVM's view of the node's state: accounts, code and storage read from and written to a
 * StateOverlay (the block being built), with checkpoints as a stack of undo journals. Balances are
 * the same wei balances native transfers use, so one account model serves both.
 */
export class EvmStateAdapter implements StateManagerInterface {
  private readonly journals: Journal[] = [];
  private original = new Map<KeyStr, Uint8Array>();
  /**
   * The dev chain's impersonated sender that has code, during its transaction: runTx's first read of it (the
   * EIP-3607 check) sees no code, as Hardhat and anvil skip that check for impersonated accounts; the account
   * it writes back keeps its code (hideSenderCode).
   */
  private hidden: { key: KeyStr; served: boolean } | null = null;

  readonly originalStorageCache = {
    get: async (address: Address, key: Uint8Array): Promise<Uint8Array> => {
      const k = storageKey(address.bytes, key);
      let v = this.original.get(k);
      if (v === undefined) {
        if (this.base.fetch) await this.load(k);
        v = this.overlay.get(k) ?? EMPTY;
        this.original.set(k, v);
      }
      return v;
    },
    clear: (): void => {
      this.original = new Map();
    },
  };

  constructor(
    public overlay: StateOverlay,
    /** The state under the overlay (for per-contract storage key lookup and remote loads). */
    private base: EvmBaseState,
  ) {}

  /**
   * Points the adapter at another overlay and base, forgetting journals and original values: a call VM is
   * kept between calls (creating one costs ~1 ms) and gets a fresh state view per call.
   */
  rebase(overlay: StateOverlay, base: EvmBaseState): void {
    this.overlay = overlay;
    this.base = base;
    this.journals.length = 0;
    this.original = new Map();
  }

  private write(key: KeyStr, value: Buffer | null): void {
    const j = this.journals[this.journals.length - 1];
    if (j && !j.has(key)) j.set(key, this.overlay.changes.get(key));
    if (value === null) this.overlay.delete(key);
    else this.overlay.set(key, value);
  }

  /**
   * Loads a key the overlay does not hold from a remote base. Callers test `this.base.fetch` first, so
   * block execution (a local base) reads synchronously, without an extra await per state read.
   */
  private load(key: KeyStr): Promise<void> | undefined {
    return this.overlay.changes.has(key) ? undefined : this.base.fetch?.(key);
  }

  /** For the next transaction only (null ends it): its sender's code is hidden from the EIP-3607 check. */
  hideSenderCode(address: Uint8Array | null): void {
    this.hidden = address === null ? null : { key: accountKey(address), served: false };
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    const k = accountKeyOf(address);
    if (this.base.fetch) await this.load(k);
    const raw = this.overlay.get(k);
    if (!raw) return undefined;
    const a = decodeAccount(raw);
    const hide = this.hidden !== null && this.hidden.key === k && !this.hidden.served;
    if (hide) (this.hidden as { served: boolean }).served = true;
    // The constructor createAccount ends in, without its round trip of both numbers through hex bytes (runTx reads
    // the sender, the recipient and each touched account again at its end).
    return new Account(a.nonce, a.balance, KECCAK256_RLP, hide ? KECCAK256_NULL : (a.codeHash ?? KECCAK256_NULL));
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    if (!account) return this.deleteAccount(address);
    const k = accountKeyOf(address);
    let codeHash = isEmptyCodeHash(account.codeHash) ? undefined : account.codeHash;
    // The hidden sender's account as runTx read it comes back without its code hash: it keeps the stored one.
    if (codeHash === undefined && this.hidden?.key === k) {
      const stored = this.overlay.get(k);
      codeHash = stored ? decodeAccount(stored).codeHash : undefined;
    }
    this.write(k, encodeAccount({ nonce: account.nonce, balance: account.balance, codeHash }));
  }

  async deleteAccount(address: Address): Promise<void> {
    this.write(accountKeyOf(address), null);
    this.write(codeKey(address.bytes), null);
  }

  async modifyAccountFields(
    address: Address,
    fields: Partial<Pick<Account, 'nonce' | 'balance' | 'codeHash' | 'storageRoot'>>,
  ): Promise<void> {
    const acc = (await this.getAccount(address)) ?? new Account();
    if (fields.nonce !== undefined) acc.nonce = fields.nonce;
    if (fields.balance !== undefined) acc.balance = fields.balance;
    if (fields.codeHash !== undefined) acc.codeHash = fields.codeHash;
    await this.putAccount(address, acc);
  }

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    const acc = (await this.getAccount(address)) ?? new Account();
    if (value.length === 0) {
      this.write(codeKey(address.bytes), null);
      acc.codeHash = KECCAK256_NULL;
    } else {
      this.write(codeKey(address.bytes), Buffer.from(value));
      acc.codeHash = keccak256(value);
    }
    await this.putAccount(address, acc);
  }

  async getCode(address: Address): Promise<Uint8Array> {
    const k = codeKey(address.bytes);
    if (this.base.fetch) await this.load(k);
    return this.overlay.get(k) ?? EMPTY;
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  /** Slot values are stored without leading zeros (as the EVM hands them over); zero = absent. */
  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const k = storageKey(address.bytes, key);
    if (this.base.fetch) await this.load(k);
    return this.overlay.get(k) ?? EMPTY;
  }

  async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    let i = 0;
    while (i < value.length && value[i] === 0) i++;
    this.write(storageKey(address.bytes, key), i === value.length ? null : Buffer.from(value.subarray(i)));
  }

  async clearStorage(address: Address): Promise<void> {
    const owner = Buffer.from(address.bytes).toString('latin1');
    const keys = new Set(await this.base.storageKeysOf(owner));
    for (const k of this.overlay.changes.keys()) {
      if (k.length === 53 && k.charCodeAt(0) === NS.storage && k.slice(1, 21) === owner) keys.add(k);
    }
    for (const k of keys) {
      if (this.base.fetch) await this.load(k);
      if (this.overlay.get(k) !== undefined) this.write(k, null);
    }
  }

  async checkpoint(): Promise<void> {
    this.journals.push(new Map());
  }

  async commit(): Promise<void> {
    const top = this.journals.pop();
    const parent = this.journals[this.journals.length - 1];
    if (top && parent) for (const [k, v] of top) if (!parent.has(k)) parent.set(k, v);
  }

  async revert(): Promise<void> {
    const top = this.journals.pop();
    if (!top) return;
    for (const [k, prev] of top) {
      if (prev === undefined) this.overlay.changes.delete(k);
      else this.overlay.changes.set(k, prev);
    }
  }

  /** The node's state root is computed per block by the state trie, not per transaction. */
  async getStateRoot(): Promise<Uint8Array> {
    return new Uint8Array(32);
  }

  async setStateRoot(): Promise<void> {
    throw new Error('setStateRoot is not supported: the node keeps the latest state only');
  }

  async hasStateRoot(): Promise<boolean> {
    return false;
  }

  clearCaches(): void {}

  shallowCopy(): StateManagerInterface {
    return new EvmStateAdapter(this.overlay, this.base);
  }
}
