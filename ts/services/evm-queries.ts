import { BLOCK_GAS_LIMIT, type CallArgs, type ReceiptRecord, simulateCall } from '../execution/index.js';
import { codeKey, storageKey } from '../state/accounts.js';
import { ExecutionRevertedError, ServerError } from '../util/errors.js';
import { fromHex, to0x } from '../util/hex.js';
import type { ChainContext, NodeContext } from './context.js';

const ERROR_SELECTOR = '08c379a0';
const PANIC_SELECTOR = '4e487b71';

/** Solidity revert reason: Error(string) or Panic(uint256), else null. */
export function revertReason(data: Uint8Array): string | null {
  const hex = Buffer.from(data).toString('hex');
  try {
    if (hex.startsWith(ERROR_SELECTOR) && hex.length >= 8 + 128) {
      const len = Number.parseInt(hex.slice(8 + 64, 8 + 128), 16);
      return Buffer.from(hex.slice(8 + 128, 8 + 128 + len * 2), 'hex').toString('utf8');
    }
    if (hex.startsWith(PANIC_SELECTOR) && hex.length >= 8 + 64) return `panic: 0x${BigInt(`0x${hex.slice(8, 72)}`).toString(16)}`;
  } catch {
    return null;
  }
  return null;
}

function callEnv(ctx: ChainContext) {
  const head = ctx.chain.head;
  // Calls run in the context of the next block on top of the head (its number and a fresh timestamp).
  return ctx.chain.blockEnv(head.index + 1, head.validator, Math.max(head.timestamp, Math.floor(Date.now() / 1000)));
}

/** eth_call: output bytes, or ExecutionRevertedError (code 3) / ServerError for other EVM errors. */
export async function ethCall(ctx: ChainContext, args: CallArgs): Promise<Uint8Array> {
  await ctx.chain.settled();
  const out = await simulateCall(callEnv(ctx), ctx.chain.state, args);
  if (out.ok) return out.returnValue;
  if (out.reverted) throw new ExecutionRevertedError(revertReason(out.returnValue), to0x(out.returnValue));
  throw callFailure(out.error);
}

/**
 * EVM failures other than a revert, in geth's words (clients match on them; e.g. viem, ethers and Foundry read
 * "max initcode size exceeded", "out of gas"): the EVM's name for the error is mapped, any detail kept.
 */
const GETH_CALL_ERRORS: [RegExp, string][] = [
  [/initcode (size )?(exceeds|is too large|too large)|max initcode size/i, 'max initcode size exceeded'],
  [/code size to deposit exceeds maximum code size|max code size/i, 'max code size exceeded'],
  [/code store out of gas/i, 'contract creation code storage out of gas'],
  [/create collision/i, 'contract address collision'],
  [/insufficient balance/i, 'insufficient funds for gas * price + value'],
  [/invalid jump/i, 'invalid jump destination'],
  [/static state change/i, 'write protection'],
  [/stack overflow/i, 'stack limit reached 1024'],
];

export function callFailure(evmError: string | undefined): ServerError {
  const raw = evmError ?? 'execution failed';
  for (const [re, words] of GETH_CALL_ERRORS) {
    if (!re.test(raw)) continue;
    return new ServerError(raw.toLowerCase().startsWith(words) ? raw : `${words}: ${raw}`);
  }
  return new ServerError(raw);
}

/** The spec's eth_estimateGas floor for a transaction carrying data ("21000 for a transfer, 100000 with data"). */
export const DATA_GAS_FLOOR = 100_000n;

/**
 * eth_estimateGas: 21000 for a plain transfer to an account without code, else the lowest gas limit at which
 * the call succeeds (binary search as geth does), raised to the spec's 100000 when the transaction carries
 * data. The floor never exceeds the caller's own gas cap: a transaction limited below it still gets an answer.
 */
export async function estimateGas(ctx: NodeContext, args: CallArgs): Promise<bigint> {
  await ctx.chain.settled();
  const state = ctx.chain.state;
  const hasData = args.data !== undefined && args.data.length > 0;
  if (args.to && !hasData && !state.get(codeKey(args.to))) return 21_000n;
  const cap = args.gas ?? BLOCK_GAS_LIMIT;
  const needed = await lowestWorkingGas(ctx, args, cap);
  if (!hasData) return needed;
  const floor = DATA_GAS_FLOOR < cap ? DATA_GAS_FLOOR : cap;
  return needed > floor ? needed : floor;
}

/** The lowest gas limit (up to `cap`) at which the call succeeds; revert and other failures as geth reports them. */
async function lowestWorkingGas(ctx: NodeContext, args: CallArgs, cap: bigint): Promise<bigint> {
  const env = callEnv(ctx);
  const state = ctx.chain.state;
  const top = await simulateCall(env, state, { ...args, gas: cap });
  if (!top.ok) {
    if (top.reverted) throw new ExecutionRevertedError(revertReason(top.returnValue), to0x(top.returnValue));
    throw callFailure(top.error === 'out of gas' ? `gas required exceeds allowance (${cap})` : top.error);
  }
  // The used gas is a good first guess; most calls succeed at it (no 63/64 or refund effects).
  const guess = await simulateCall(env, state, { ...args, gas: top.gasUsed });
  if (guess.ok) return top.gasUsed;
  let lo = top.gasUsed;
  let hi = cap;
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    const r = await simulateCall(env, state, { ...args, gas: mid });
    if (r.ok) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Code of an account (empty when it has none). */
export function codeAt(ctx: ChainContext, address: string): Uint8Array {
  return ctx.chain.state.get(codeKey(address.toLowerCase())) ?? new Uint8Array(0);
}

/** 32-byte value of a storage slot (zero when unset). */
export function storageAt(ctx: NodeContext, address: string, slot: bigint): Uint8Array {
  const slotBytes = fromHex(slot.toString(16).padStart(64, '0'));
  const v = ctx.chain.state.get(storageKey(fromHex(address), slotBytes));
  const out = new Uint8Array(32);
  if (v) out.set(v, 32 - v.length);
  return out;
}

export interface LocatedReceipt {
  receipt: ReceiptRecord;
  height: number;
  index: number;
  /** Index of the receipt's first log within the block. */
  firstLogIndex: number;
}

/** A block's receipts with each one's position and block-level first log index. */
export function locateReceipts(height: number, rs: readonly ReceiptRecord[]): LocatedReceipt[] {
  let logIndex = 0;
  return rs.map((receipt, index) => {
    const r = { receipt, height, index, firstLogIndex: logIndex };
    logIndex += receipt.logs.length;
    return r;
  });
}

/** Receipts of a block with each one's block-level first log index. */
export async function blockReceipts(ctx: ChainContext, height: number): Promise<LocatedReceipt[] | null> {
  const rs = await ctx.chain.blocks.receipts(height);
  return rs ? locateReceipts(height, rs) : null;
}
