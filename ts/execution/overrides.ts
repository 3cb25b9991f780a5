/**
 * geth's call overrides (internal/ethapi/override): a state override set applied before a call, trace or
 * simulated block runs, and block header overrides for its environment (docs/evm.md "Call overrides").
 * Plain data (bigints, bytes, maps): the sets cross to the call and trace workers as they are.
 */
import type { VM } from '@ethereumjs/vm';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { NS, storageKey, type KeyStr, type StateOverlay } from '../state/index.js';
import type { BlockEnv, HeaderOverrides } from './block-env.js';
export type { HeaderOverrides } from './block-env.js';
import type { EvmBaseState, EvmStateAdapter } from './state-adapter.js';

/** One account's overrides (geth's OverrideAccount). Slots and values are 32-byte words. */
export interface AccountOverride {
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  /** Replaces the whole storage of the account. */
  state?: Map<string, Uint8Array>;
  /** Writes these slots over the stored ones. */
  stateDiff?: Map<string, Uint8Array>;
  /** Moves the precompile at this address to another one (the address then runs its code, if any). */
  movePrecompileToAddress?: string;
}

/** Address (0x, lower case) to its overrides, in the order given. */
export type StateOverrideSet = Map<string, AccountOverride>;

/** geth's BlockOverrides as this node applies them. */
export interface BlockOverrides extends HeaderOverrides {
  number?: bigint;
  time?: bigint;
}

/** A state override set that cannot be applied (geth's wording; -32000 as geth answers it). */
export class OverrideError extends Error {}

const latin1Of = (address: string): string => Buffer.from(address.slice(2), 'hex').toString('latin1');

/**
 * The state under a call whose overrides replace the whole storage of some accounts (`state`): the
 * replaced accounts' stored slots read as absent, without enumerating them (a token with millions of
 * holders costs the same as an empty one). Every other read goes to the base. The new slots and the other
 * overrides are written above it (applyStateOverrides).
 */
export class MaskedStorageState implements EvmBaseState {
  /** Owners (address bytes as latin1) whose stored slots are hidden. */
  private readonly masked = new Set<string>();

  constructor(private readonly base: EvmBaseState) {}

  /** Hide every slot the base holds for `address` (0x, lower case). */
  mask(address: string): void {
    this.masked.add(latin1Of(address));
  }

  private hides(key: KeyStr): boolean {
    return this.masked.size > 0 && key.length === 53 && key.charCodeAt(0) === NS.storage && this.masked.has(key.slice(1, 21));
  }

  get(key: KeyStr): Buffer | undefined {
    return this.hides(key) ? undefined : this.base.get(key);
  }

  storageKeysOf(owner: string): ReadonlySet<KeyStr> | Promise<ReadonlySet<KeyStr>> {
    return this.masked.has(owner) ? new Set() : this.base.storageKeysOf(owner);
  }

  fetch(key: KeyStr): Promise<void> {
    return this.hides(key) ? Promise.resolve() : (this.base.fetch?.(key) ?? Promise.resolve());
  }

  runSync<T>(fn: () => T): Promise<T> {
    return this.base.runSync ? this.base.runSync(fn) : Promise.resolve().then(fn);
  }

  prefetch(keys: Iterable<KeyStr>): void {
    this.base.prefetch?.(keys);
  }
}

/**
 * Writes `overrides` into `overlay` through `adapter` (its state adapter, reading remote values as needed),
 * as geth applies them before the run: nonce, code, balance, then `state` (every slot the account had, in
 * the base under `masked` and in the overlay, is gone) or `stateDiff`. The precompile moves are the VM's
 * (movePrecompiles).
 */
export async function applyStateOverrides(
  adapter: EvmStateAdapter,
  overlay: StateOverlay,
  masked: MaskedStorageState,
  overrides: StateOverrideSet,
): Promise<void> {
  for (const [address, o] of overrides) {
    if (o.state && o.stateDiff) throw new OverrideError(`account ${address} has both 'state' and 'stateDiff'`);
    const at = createAddressFromString(address);
    if (o.nonce !== undefined || o.balance !== undefined) {
      const acc = (await adapter.getAccount(at)) ?? new Account();
      if (o.nonce !== undefined) acc.nonce = o.nonce;
      if (o.balance !== undefined) acc.balance = o.balance;
      await adapter.putAccount(at, acc);
    }
    if (o.code !== undefined) await adapter.putCode(at, o.code);
    if (o.state) {
      masked.mask(address);
      // Slots written earlier in the same run (an earlier simulated block) go too.
      const owner = latin1Of(address);
      for (const k of [...overlay.changes.keys()]) {
        if (k.length === 53 && k.charCodeAt(0) === NS.storage && k.slice(1, 21) === owner) overlay.changes.delete(k);
      }
    }
    for (const [slot, value] of o.state ?? o.stateDiff ?? []) {
      await adapter.putStorage(at, Buffer.from(slot, 'hex'), value);
    }
  }
}

/** Storage key of an override slot (hex without 0x, 64 digits) at `address`: for prefetching. */
export const overrideSlotKey = (address: string, slot: string): KeyStr =>
  storageKey(Buffer.from(address.slice(2), 'hex'), Buffer.from(slot, 'hex'));

type PrecompileMap = Map<string, unknown>;
interface EvmPrecompiles {
  _precompiles: PrecompileMap;
}

/** A VM's own precompile table, kept while a run has moved or removed some. */
const originalPrecompiles = new WeakMap<VM, PrecompileMap>();

/**
 * geth's precompile rules for an override set: `movePrecompileToAddress` moves a precompile (refused when
 * the source is none, or the target is itself overridden), and an overridden precompile address runs
 * whatever code it is given instead. Undone by restorePrecompiles (the VM is pooled).
 */
export function movePrecompiles(vm: VM, overrides: StateOverrideSet): void {
  const evm = vm.evm as unknown as EvmPrecompiles;
  const current = evm._precompiles;
  const next = new Map(current);
  const movedTo = new Set<string>();
  let changed = false;
  for (const [address, o] of overrides) {
    const key = address.slice(2);
    if (movedTo.has(key)) throw new OverrideError(`account ${address} has already been overridden by a precompile`);
    const p = current.get(key);
    if (o.movePrecompileToAddress !== undefined) {
      if (p === undefined) throw new OverrideError(`account ${address} is not a precompile`);
      if (overrides.has(o.movePrecompileToAddress)) {
        throw new OverrideError(`account ${o.movePrecompileToAddress} is already overridden`);
      }
      const to = o.movePrecompileToAddress.slice(2);
      next.set(to, p);
      movedTo.add(to);
    }
    if (p !== undefined) {
      next.delete(key);
      changed = true;
    }
  }
  if (!changed) return;
  if (!originalPrecompiles.has(vm)) originalPrecompiles.set(vm, current);
  evm._precompiles = next;
}

/** Gives a pooled VM its own precompile table back after a run that moved some. */
export function restorePrecompiles(vm: VM): void {
  const original = originalPrecompiles.get(vm);
  if (!original) return;
  (vm.evm as unknown as EvmPrecompiles)._precompiles = original;
  originalPrecompiles.delete(vm);
}

/** The environment with geth's block overrides applied: number and time, the header fields apart. */
export function withBlockOverrides(env: BlockEnv, o: BlockOverrides | undefined): BlockEnv {
  if (!o) return env;
  const { number, time, ...header } = o;
  const out: BlockEnv = { ...env };
  if (number !== undefined) out.height = Number(number);
  if (time !== undefined) out.timestamp = Number(time);
  if (Object.keys(header).length > 0) out.header = { ...env.header, ...header };
  return out;
}
