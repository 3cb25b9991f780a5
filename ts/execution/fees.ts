/**
 * The fee fields of a call (gasPrice, maxFeePerGas, maxPriorityFeePerGas) as geth's state transition
 * honours them for eth_call, eth_estimateGas, debug_traceCall and eth_simulateV1: the price the EVM sees
 * (GASPRICE), the fee checks against the block's base fee, and the gas bought from the caller's balance.
 */
import { type Address, toChecksumAddress } from '@ethereumjs/util';
import type { PooledVm } from './vm-pool.js';

export interface FeeFields {
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  /** When given, must be the chain's (geth's CallDefaults). */
  chainId?: bigint;
}

/** geth's refusal of a call object naming another chain; null when it names none or this one. */
export function chainIdMismatch(f: FeeFields, chainId: number): string | null {
  return f.chainId !== undefined && f.chainId !== BigInt(chainId)
    ? `chainId does not match node's (have=${f.chainId}, want=${chainId})`
    : null;
}

/** The price a call pays per gas, the most it may pay (the balance check) and the tip. */
export interface CallFees {
  price: bigint;
  feeCap: bigint;
  tip: bigint;
}

/**
 * geth's ToMessage: a legacy gasPrice is fee cap and tip at once; else the EIP-1559 fields (absent = 0), the
 * price being base fee + tip capped at the fee cap, or 0 when both are 0.
 */
export function callFees(f: FeeFields, baseFee: bigint): CallFees {
  if (f.gasPrice !== undefined) return { price: f.gasPrice, feeCap: f.gasPrice, tip: f.gasPrice };
  const feeCap = f.maxFeePerGas ?? 0n;
  const tip = f.maxPriorityFeePerGas ?? 0n;
  if (feeCap === 0n && tip === 0n) return { price: 0n, feeCap, tip };
  const price = tip + baseFee;
  return { price: price > feeCap ? feeCap : price, feeCap, tip };
}

/** A call that names fees of both styles (geth's CallDefaults refuses it). */
export function mixedFeesError(f: FeeFields): string | null {
  return f.gasPrice !== undefined && (f.maxFeePerGas !== undefined || f.maxPriorityFeePerGas !== undefined)
    ? 'both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified'
    : null;
}

/** A failed transaction check: geth's words and its JSON-RPC code in eth_simulateV1 (errors.go). */
export class TxCheckError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** geth's codes for transaction checks (internal/ethapi/errors.go). */
export const TX_ERROR_CODES = {
  nonceTooHigh: -38011,
  nonceTooLow: -38010,
  intrinsicGas: -38013,
  insufficientFunds: -38014,
  blockGasLimit: -38015,
  invalidParams: -32602,
  internal: -32603,
} as const;

/**
 * geth's preCheck fee rules and buyGas: unless `noBaseFee` and no fee was given, the fee cap must cover the
 * tip and the base fee; the caller must hold gas × fee cap + value, and gas × price is taken from it (the
 * run refunds nothing: a call's state is thrown away; simulateV1 settles after the run). Throws
 * TxCheckError in geth's words.
 */
export async function buyGas(
  c: PooledVm,
  caller: Address,
  fees: CallFees,
  gasLimit: bigint,
  value: bigint,
  noBaseFee: boolean,
): Promise<void> {
  const from = toChecksumAddress(caller.toString());
  const baseFee = c.block.header.baseFeePerGas ?? 0n;
  if (!(noBaseFee && fees.feeCap === 0n && fees.tip === 0n)) {
    if (fees.feeCap < fees.tip) {
      throw new TxCheckError(
        `max priority fee per gas higher than max fee per gas: address ${from}, maxPriorityFeePerGas: ${fees.tip}, maxFeePerGas: ${fees.feeCap}`,
        TX_ERROR_CODES.invalidParams,
      );
    }
    if (fees.feeCap < baseFee) {
      throw new TxCheckError(
        `max fee per gas less than block base fee: address ${from}, maxFeePerGas: ${fees.feeCap}, baseFee: ${baseFee}`,
        TX_ERROR_CODES.invalidParams,
      );
    }
  }
  if (fees.price === 0n && fees.feeCap === 0n) return;
  const adapter = c.adapter;
  const account = await adapter.getAccount(caller);
  const have = account?.balance ?? 0n;
  const want = gasLimit * fees.feeCap + value;
  if (have < want) {
    throw new TxCheckError(
      `insufficient funds for gas * price + value: address ${from} have ${have} want ${want}`,
      TX_ERROR_CODES.insufficientFunds,
    );
  }
  await adapter.modifyAccountFields(caller, { balance: have - gasLimit * fees.price });
}
