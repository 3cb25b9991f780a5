import type { Common } from '@ethereumjs/common';
import type { EVMResult } from '@ethereumjs/evm';
import { createFeeMarket1559Tx, paramsTx } from '@ethereumjs/tx';
import { type Address, createAddressFromString, createZeroAddress, toChecksumAddress } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { codeKey, StateOverlay } from '../state/index.js';
import { BLOCK_GAS_LIMIT, type BlockEnv } from './block-executor.js';
import { chainCommon } from './common.js';
import { CallTimeoutError } from './deadline.js';
import { type FeeFields, TxCheckError, buyGas, callFees, chainIdMismatch } from './fees.js';
import { MaskedStorageState, type StateOverrideSet, applyStateOverrides, movePrecompiles } from './overrides.js';
import type { EvmBaseState } from './state-adapter.js';
import { type PooledVm, acquireVm, releaseVm } from './vm-pool.js';

export interface CallArgs extends FeeFields {
  from?: string;
  /** Absent: contract creation with data as init code. */
  to?: string;
  data?: Uint8Array;
  value?: bigint;
  gas?: bigint;
  /** EIP-2930 access list: charged as intrinsic gas and pre-warmed, as a type-1/2 transaction would. */
  accessList?: { address: string; storageKeys: string[] }[];
  /** Checked only where geth checks it (eth_simulateV1 with validation). */
  nonce?: bigint;
}

/** What a call runs over besides its block environment (whose header overrides are in BlockEnv.header). */
export interface CallOverrides {
  state?: StateOverrideSet;
}

export interface CallOutcome {
  ok: boolean;
  /** Output on success; revert data on a revert. */
  returnValue: Uint8Array;
  /** EVM error name (e.g. "revert", "out of gas") when !ok. */
  error?: string;
  reverted: boolean;
  /** Gas the whole transaction would be charged: intrinsic + execution (after refunds). */
  gasUsed: bigint;
  /** Of a completed run: the gas before refunds (intrinsic + execution). */
  gasSpent?: bigint;
  /** The contract a creation call made (0x-prefixed, lower case). */
  created?: string;
}

/** One EIP-2930 access list entry in its JSON-RPC form (addresses and keys lower-case, 0x-prefixed). */
export interface AccessListItem {
  address: string;
  storageKeys: string[];
}

/** Intrinsic gas of a transaction with these fields, by building it (what runTx charges). */
export function txIntrinsicGas(args: CallArgs, common: Common): bigint {
  const tx = createFeeMarket1559Tx(
    {
      to: args.to as `0x${string}` | undefined,
      data: args.data,
      value: args.value ?? 0n,
      gasLimit: BLOCK_GAS_LIMIT,
      maxFeePerGas: 0n,
      accessList: args.accessList as never,
    },
    { common },
  );
  return tx.getIntrinsicGas();
}

const txCommons = new WeakMap<Common, Common>();

/** The chain's Common with the transaction parameters a transaction adds to its own copy. */
function withTxParams(common: Common): Common {
  let c = txCommons.get(common);
  if (!c) {
    c = common.copy();
    c.updateParams(paramsTx);
    txCommons.set(common, c);
  }
  return c;
}

/** EIPs that change intrinsic gas beyond the rule below (later hardforks): with any active, the transaction is built. */
const LATER_INTRINSIC_EIPS = [2780, 7981, 8038];

/**
 * Intrinsic gas of a transaction with these fields (base, calldata, creation and init code words, access
 * list), the rule of @ethereumjs/tx's getIntrinsicGas up to Prague, from the Common's parameters. Building
 * the transaction to ask it costs ~100 µs (it copies the Common), and an estimate runs ~20 calls.
 */
export function intrinsicGas(args: CallArgs, chain: Common): bigint {
  if (LATER_INTRINSIC_EIPS.some((e) => chain.isActivatedEIP(e))) return txIntrinsicGas(args, chain);
  const common = withTxParams(chain);
  const data = args.data ?? new Uint8Array(0);
  let zeros = 0;
  for (let i = 0; i < data.length; i++) if (data[i] === 0) zeros++;
  let gas =
    common.param('txGas') +
    BigInt(zeros) * common.param('txDataZeroGas') +
    BigInt(data.length - zeros) * common.param('txDataNonZeroGas');
  if (!args.to) {
    gas += common.param('txCreationGas');
    if (common.isActivatedEIP(3860)) gas += common.param('initCodeWordGas') * BigInt(Math.ceil(data.length / 32));
  }
  for (const item of args.accessList ?? []) {
    gas += common.param('accessListAddressGas') + BigInt(item.storageKeys.length) * common.param('accessListStorageKeyGas');
  }
  return gas;
}

/**
 * The EIP-2929 warm set runTx starts a transaction with (precompiles, sender, recipient, coinbase per
 * EIP-3651, the access list), so a call costs exactly what the same transaction would.
 */
export function warmAsTransaction(vm: VM, caller: Address, args: CallArgs, coinbase: Address): void {
  if (!vm.common.isActivatedEIP(2929)) return;
  const j = vm.evm.journal;
  const unprefixed = (a: string | Address): string => a.toString().slice(2).toLowerCase();
  for (const p of vm.evm.precompiles.keys()) j.addAlwaysWarmAddress(p);
  j.addAlwaysWarmAddress(unprefixed(caller));
  if (args.to) j.addAlwaysWarmAddress(unprefixed(args.to));
  if (vm.common.isActivatedEIP(3651)) j.addAlwaysWarmAddress(unprefixed(coinbase));
  for (const item of args.accessList ?? []) {
    j.addAlwaysWarmAddress(unprefixed(item.address));
    for (const slot of item.storageKeys) j.addAlwaysWarmSlot(unprefixed(item.address), unprefixed(slot));
  }
}

/**
 * Run a call against `view` without committing anything (eth_call, eth_estimateGas): a throwaway overlay,
 * the VM of a block at env.height. No nonce, fee or balance-for-gas checks (as geth's eth_call), value
 * transfers still need the balance. Past `deadline` (epoch ms) it throws CallTimeoutError.
 */
export async function simulateCall(
  env: BlockEnv,
  view: EvmBaseState,
  args: CallArgs,
  deadline = Number.POSITIVE_INFINITY,
  overrides: CallOverrides = {},
): Promise<CallOutcome> {
  return (await traced(env, view, args, deadline, false, overrides)).outcome;
}

/**
 * A pooled VM over a fresh overlay of `view` with the state overrides written into it (and its precompiles
 * moved as they say), ready for one run; release it with releaseVm. Throws OverrideError for a set geth refuses.
 */
export async function acquireOverridden(
  env: BlockEnv,
  view: EvmBaseState,
  overrides: CallOverrides,
  deadline: number,
): Promise<PooledVm> {
  const state = overrides.state;
  const base = state ? new MaskedStorageState(view) : view;
  const overlay = new StateOverlay(base);
  const c = await acquireVm(env, overlay, base);
  try {
    c.guard.deadline = deadline;
    if (state) {
      movePrecompiles(c.vm, state);
      await applyStateOverrides(c.adapter, overlay, base as MaskedStorageState, state);
    }
    return c;
  } catch (err) {
    releaseVm(c);
    throw err;
  }
}

async function traced(
  env: BlockEnv,
  view: EvmBaseState,
  args: CallArgs,
  deadline: number,
  reportAccess: boolean,
  overrides: CallOverrides,
): Promise<{ outcome: CallOutcome; accessed: AccessListItem[] }> {
  const c = await acquireOverridden(env, view, overrides, deadline);
  try {
    const journal = c.vm.evm.journal;
    if (reportAccess) journal.startReportingAccessList();
    const outcome = await runOn(c, args);
    const accessed: AccessListItem[] = [];
    for (const [address, slots] of journal.accessList ?? []) {
      accessed.push({ address: `0x${address}`, storageKeys: [...slots].map((k) => `0x${k.padStart(64, '0')}`) });
    }
    return { outcome, accessed };
  } finally {
    delete c.vm.evm.journal.accessList;
    releaseVm(c);
  }
}

/** Most rounds eth_createAccessList runs before it answers with the last list (geth stops when it repeats). */
const MAX_ACCESS_LIST_ROUNDS = 8;

export interface AccessListOutcome {
  accessList: AccessListItem[];
  /** Gas of the call with that access list. */
  gasUsed: bigint;
  /** Why the call failed with it, if it did (geth's `error` field). */
  failure?: CallOutcome;
}

const sameList = (a: AccessListItem[], b: AccessListItem[]): boolean =>
  a.length === b.length && a.every((x, i) => x.address === b[i].address && x.storageKeys.join() === b[i].storageKeys.join());

/**
 * eth_createAccessList as geth computes it: run the call with the current list, collect what it touched
 * (addresses and slots, leaving out the sender, the recipient or created contract and the precompiles),
 * and repeat with that list until it stops changing; answer the list and the gas used with it.
 */
export async function createAccessList(
  env: BlockEnv,
  view: EvmBaseState,
  args: CallArgs,
  deadline = Number.POSITIVE_INFINITY,
  overrides: CallOverrides = {},
): Promise<AccessListOutcome> {
  const common = chainCommon(env.chainId, env.hardfork);
  let list: AccessListItem[] = (args.accessList ?? []).map((i) => ({
    address: i.address.toLowerCase(),
    storageKeys: i.storageKeys.map((k) => k.toLowerCase()),
  }));
  for (let round = 0; ; round++) {
    const { outcome, accessed } = await traced(env, view, { ...args, accessList: list }, deadline, true, overrides);
    const skip = new Set<string>([(args.from ?? `0x${'00'.repeat(20)}`).toLowerCase()]);
    if (args.to) skip.add(args.to.toLowerCase());
    if (outcome.created) skip.add(outcome.created);
    // Entries of the list this round ran with were warm from the start (never reported again): they stay,
    // as in geth, whose tracer starts from the previous list.
    const merged = new Map<string, Set<string>>();
    for (const i of [...list, ...accessed]) {
      if (skip.has(i.address) || isPrecompile(i.address, common)) continue;
      const keys = merged.get(i.address) ?? new Set<string>();
      for (const k of i.storageKeys) keys.add(k);
      merged.set(i.address, keys);
    }
    const next = [...merged]
      .map(([address, keys]) => ({ address, storageKeys: [...keys].sort() }))
      .sort((a, b) => a.address.localeCompare(b.address));
    if (sameList(next, list) || round + 1 >= MAX_ACCESS_LIST_ROUNDS) {
      return { accessList: next, gasUsed: outcome.gasUsed, failure: outcome.ok ? undefined : outcome };
    }
    list = next;
  }
}

/** Precompiles are always warm; geth leaves them out of generated lists. */
function isPrecompile(address: string, common: Common): boolean {
  const n = BigInt(address);
  // 0x01..0x11 covers every precompile up to Prague (0x0a point evaluation, 0x0b-0x11 BLS12-381).
  return n >= 1n && n <= (common.isActivatedEIP(2537) ? 0x11n : 0x0an);
}

/** EIP-3860's limit on contract creation code: twice the EIP-170 code size limit (49152 bytes). */
export const MAX_INITCODE_SIZE = 49_152;

const failed = (error: string, gasUsed: bigint): CallOutcome => ({
  ok: false,
  returnValue: new Uint8Array(0),
  error,
  reverted: false,
  gasUsed,
});

/** The caller of a call: `from`, or the zero address when absent (geth). */
export const callerOf = (args: CallArgs): Address => (args.from ? createAddressFromString(args.from) : createZeroAddress());

/**
 * geth's fee checks and gas purchase for a call with gas limit `gasLimit` (fees.ts), before it runs; the
 * failure's words, or null. eth_call never checks the base fee against a call without fees (NoBaseFee).
 */
export async function chargeCallGas(c: PooledVm, args: CallArgs, gasLimit: bigint): Promise<string | null> {
  try {
    const fees = callFees(args, c.block.header.baseFeePerGas ?? 0n);
    await buyGas(c, callerOf(args), fees, gasLimit, args.value ?? 0n, true);
    return null;
  } catch (err) {
    if (err instanceof TxCheckError) return err.message;
    throw err;
  }
}

/**
 * Run `args` as eth_call does on a pooled VM: the caller (zero address when absent), the warm set of a
 * real transaction, the price its fee fields give (0 without), balance checked only when value moves.
 * `gas` is after intrinsic gas.
 */
export function runAsCall(c: PooledVm, args: CallArgs, gas: bigint): Promise<EVMResult> {
  const caller = callerOf(args);
  warmAsTransaction(c.vm, caller, args, c.block.header.coinbase);
  return c.vm.evm.runCall({
    block: c.block,
    caller,
    origin: caller,
    to: args.to ? createAddressFromString(args.to) : undefined,
    data: args.data ?? new Uint8Array(0),
    value: args.value ?? 0n,
    gasLimit: gas,
    gasPrice: callFees(args, c.block.header.baseFeePerGas ?? 0n).price,
    skipBalance: args.value === undefined || args.value === 0n,
  });
}

async function runOn(c: PooledVm, args: CallArgs): Promise<CallOutcome> {
  const { common } = c;
  const gasLimit = args.gas ?? BLOCK_GAS_LIMIT;
  const dataLength = args.data?.length ?? 0;
  // EIP-3860, checked before anything else as geth's state transition does (the transaction builder
  // would throw its own wording otherwise).
  if (!args.to && common.isActivatedEIP(3860) && dataLength > MAX_INITCODE_SIZE) {
    return failed(`max initcode size exceeded: code size ${dataLength} limit ${MAX_INITCODE_SIZE}`, gasLimit);
  }
  // geth's order: the call's defaults (chain id), the fee checks and the gas purchase, then intrinsic gas.
  const feeFailure = chainIdMismatch(args, c.env.chainId) ?? (await chargeCallGas(c, args, gasLimit));
  if (feeFailure) return failed(feeFailure, gasLimit);
  let intrinsic: bigint;
  try {
    intrinsic = intrinsicGas(args, common);
  } catch (err) {
    return failed((err as Error).message.split(' (')[0], gasLimit);
  }
  if (gasLimit < intrinsic) return failed(`intrinsic gas too low: have ${gasLimit}, want ${intrinsic}`, intrinsic);
  let result: EVMResult;
  try {
    result = await runAsCall(c, args, gasLimit - intrinsic);
  } catch (err) {
    if (err instanceof CallTimeoutError) throw err;
    return failed((err as Error).message, gasLimit);
  }
  const ex = result.execResult;
  const refund = ex.gasRefund ?? 0n;
  const spent = intrinsic + ex.executionGasUsed;
  // London+: refunds are capped at a fifth of the gas used.
  const gasUsed = spent - (refund < spent / 5n ? refund : spent / 5n);
  if (ex.exceptionError) {
    return {
      ok: false,
      returnValue: ex.returnValue,
      error: ex.exceptionError.error,
      reverted: ex.exceptionError.error === 'revert',
      gasUsed,
    };
  }
  const created = result.createdAddress?.toString().toLowerCase();
  return { ok: true, returnValue: ex.returnValue, reverted: false, gasUsed, gasSpent: spent, ...(created ? { created } : {}) };
}

/**
 * geth's estimator with a fee cap: the search never goes above what the caller's balance (after the state
 * overrides) pays for at that cap, beyond the value it sends; a value above the balance is its own error.
 */
async function gasAllowance(
  env: BlockEnv,
  view: EvmBaseState,
  args: CallArgs,
  deadline: number,
  overrides: CallOverrides,
): Promise<bigint | string> {
  const c = await acquireOverridden(env, view, overrides, deadline);
  try {
    const { feeCap } = callFees(args, c.block.header.baseFeePerGas ?? 0n);
    if (feeCap === 0n) return UNLIMITED;
    const caller = callerOf(args);
    const balance = (await c.adapter.getAccount(caller))?.balance ?? 0n;
    const value = args.value ?? 0n;
    if (value >= balance && value > 0n) return `insufficient funds for transfer: address ${toChecksumAddress(caller.toString())}`;
    return (balance - value) / feeCap;
  } finally {
    releaseVm(c);
  }
}

const UNLIMITED = (1n << 256n) - 1n;

/** Gas a value-moving CALL hands its callee for free (and which the caller must hold to make it). */
const CALL_STIPEND = 2300n;

/** eth_estimateGas's answer: the gas, or the failing run at the cap (a revert or another EVM error). */
export type EstimateOutcome = { ok: true; gas: bigint } | { ok: false; failure: CallOutcome; cap: bigint };

/**
 * eth_estimateGas as geth does it: 21000 for a plain transfer to an account without code, else a
 * binary search for the lowest gas limit at which the call succeeds, below `cap` (geth's optimistic first
 * bound and doubling limit; exact, without geth's 1.5% tolerance). The interface's 100000 with data is the
 * caller's, which passes it as `floor`: a call that succeeds there needs no search.
 */
export async function estimateCallGas(
  env: BlockEnv,
  view: EvmBaseState,
  args: CallArgs,
  cap: bigint,
  deadline = Number.POSITIVE_INFINITY,
  /** The caller raises a lower answer to this (the interface's 100,000 with data): the search may stop there. */
  floor = 0n,
  overrides: CallOverrides = {},
): Promise<EstimateOutcome> {
  if (args.to && (!args.data || args.data.length === 0) && !overrides.state?.has(args.to)) {
    const k = codeKey(args.to);
    await view.fetch?.(k);
    if (!view.get(k)) return { ok: true, gas: 21_000n };
  }
  const allowance = await gasAllowance(env, view, args, deadline, overrides);
  if (typeof allowance === 'string') return { ok: false, failure: failed(allowance, 0n), cap };
  if (allowance < cap) cap = allowance;
  const top = await simulateCall(env, view, { ...args, gas: cap }, deadline, overrides);
  if (!top.ok) return { ok: false, failure: top, cap };
  const succeedsAt = async (gas: bigint) => (await simulateCall(env, view, { ...args, gas }, deadline, overrides)).ok;
  // The used gas is a good first guess; most calls succeed at it (no 63/64 or refund effects).
  if (await succeedsAt(top.gasUsed)) return { ok: true, gas: top.gasUsed };
  let lo = top.gasUsed;
  let hi = cap;
  // The caller raises any answer below the floor to it: success there ends the search with the same answer.
  if (floor > lo && floor < hi) {
    if (await succeedsAt(floor)) return { ok: true, gas: floor };
    lo = floor;
  }
  // geth's optimistic limit: what the run used before refunds plus a call stipend, grown by 64/63 for the
  // gas a CALL must leave behind; nearly every call succeeds there, which bounds the search to a few thousand.
  const optimistic = (((top.gasSpent ?? top.gasUsed) + CALL_STIPEND) * 64n) / 63n;
  if (optimistic > lo && optimistic < hi) {
    if (await succeedsAt(optimistic)) hi = optimistic;
    else lo = optimistic;
  }
  while (hi - lo > 1n) {
    // Never more than double the highest failing limit (geth): the answer is rarely far above it.
    const half = (lo + hi) / 2n;
    const mid = half > lo * 2n ? lo * 2n : half;
    if (await succeedsAt(mid)) hi = mid;
    else lo = mid;
  }
  return { ok: true, gas: hi };
}
