import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { type Address, createAddressFromString, createZeroAddress } from '@ethereumjs/util';
import type { EVMResult } from '@ethereumjs/evm';
import { StateOverlay, type StateStore } from '../state/state-store.js';
import { BLOCK_GAS_LIMIT, type BlockEnv, blockVm } from './block-executor.js';

export interface CallArgs {
  from?: string;
  /** Absent: contract creation with data as init code. */
  to?: string;
  data?: Uint8Array;
  value?: bigint;
  gas?: bigint;
  /** EIP-2930 access list: charged as intrinsic gas and pre-warmed, as a type-1/2 transaction would. */
  accessList?: { address: string; storageKeys: string[] }[];
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
}

/** Intrinsic gas of a transaction with these fields (base, calldata, creation, access list). */
export function intrinsicGas(args: CallArgs, common: Awaited<ReturnType<typeof blockVm>>['common']): bigint {
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

/**
 * The EIP-2929 warm set runTx starts a transaction with (precompiles, sender, recipient, coinbase per
 * EIP-3651, the access list), so a call costs exactly what the same transaction would.
 */
export function warmAsTransaction(
  vm: Awaited<ReturnType<typeof blockVm>>['vm'],
  caller: Address,
  args: CallArgs,
  coinbase: Address,
): void {
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
 * Run a call against the state without committing anything (eth_call, eth_estimateGas): a throwaway
 * overlay over the committed state, the VM of a block at env.height. No nonce, fee or balance-for-gas
 * checks (as geth's eth_call), value transfers still need the balance.
 */
export async function simulateCall(env: BlockEnv, base: StateStore, args: CallArgs): Promise<CallOutcome> {
  const overlay = new StateOverlay(base);
  const { vm, common, block } = await blockVm(env, overlay, base);
  const intrinsic = intrinsicGas(args, common);
  const gasLimit = args.gas ?? BLOCK_GAS_LIMIT;
  if (gasLimit < intrinsic) {
    return {
      ok: false,
      returnValue: new Uint8Array(0),
      error: `intrinsic gas too low: have ${gasLimit}, want ${intrinsic}`,
      reverted: false,
      gasUsed: intrinsic,
    };
  }
  const caller: Address = args.from ? createAddressFromString(args.from) : createZeroAddress();
  warmAsTransaction(vm, caller, args, block.header.coinbase);
  let result: EVMResult;
  try {
    result = await vm.evm.runCall({
      block,
      caller,
      origin: caller,
      to: args.to ? createAddressFromString(args.to) : undefined,
      data: args.data ?? new Uint8Array(0),
      value: args.value ?? 0n,
      gasLimit: gasLimit - intrinsic,
      gasPrice: 0n,
      skipBalance: args.value === undefined || args.value === 0n,
    });
  } catch (err) {
    return { ok: false, returnValue: new Uint8Array(0), error: (err as Error).message, reverted: false, gasUsed: gasLimit };
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
  return { ok: true, returnValue: ex.returnValue, reverted: false, gasUsed };
}
