import {
  type BlockEnv,
  type AccessListOutcome,
  type CallArgs,
  type CallKind,
  type CallOutcome,
  type CallReply,
  type CallRequest,
  type CallRunner,
  type CallState,
  InProcessCallRunner,
  type BlockOverrides,
  type StateOverrideSet,
  withBlockOverrides,
} from '../execution/index.js';
import { type Block, blockGasLimitOf, transactionGasCap } from '../chain/index.js';
import { codeKey, storageKey, type StateReader } from '../state/index.js';
import { EvmTimeoutError, ExecutionRevertedError, type NodeError, ServerError, fromHex, to0x } from '../util/index.js';

export { blockGasLimitOf };
import type { ChainContext, NodeContext } from './context.js';
import { type LocatedReceipt, locateReceipts } from '../events/index.js';
import { stateAt, withStateAt } from './state-at.js';
import { committedTransaction } from './tx-queries.js';

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

/** Where a call runs: after block `height` (undefined: the head), or `pending` (on the head, as the next block). */
export type CallHeight = number | 'pending' | undefined;

/**
 * The block environment of a call (geth's, Hardhat's and anvil's rule): at `latest` or a past height h, the
 * header of that block itself (its number, time and proposer); only `pending` runs as the next block on top
 * of the head (its number and the timestamp it would get now, the chain's clock, which the dev chain moves
 * with evm_increaseTime).
 */
export async function callEnv(ctx: ChainContext, height: CallHeight): Promise<BlockEnv> {
  const head = ctx.chain.head;
  if (height === 'pending') {
    return ctx.chain.blockEnv(head.index + 1, head.validator, Math.max(head.timestamp, ctx.chain.now()));
  }
  if (height === undefined || height >= head.index) return ctx.chain.blockEnv(head.index, head.validator, head.timestamp);
  const block = await ctx.chain.blocks.getBlock(height);
  if (!block) throw new Error(`block ${height} missing below the head`);
  return ctx.chain.blockEnv(height, block.validator, block.timestamp);
}

/** geth's overrides of a call: the state override set and the block overrides. */
export interface QueryOverrides {
  state?: StateOverrideSet;
  block?: BlockOverrides;
}

/** Where no node runs (benches, service tests), calls run in-process with the default limits. */
const inProcess = new InProcessCallRunner();

export const callRunnerOf = (ctx: ChainContext): CallRunner => (ctx as Partial<NodeContext>).evmCalls ?? inProcess;

/**
 * One run on the context's call runner. A run past `--rpc-evmtimeout` becomes EvmTimeoutError here and only here;
 * a full pool already throws the node's EvmBusyError (CallPoolBusyError).
 */
export async function runInCallPool(ctx: ChainContext, req: CallRequest): Promise<Exclude<CallReply, { kind: 'timeout' }>> {
  const runner = callRunnerOf(ctx);
  const reply = await runner.run(req);
  if (reply.kind === 'timeout') throw new EvmTimeoutError(runner.timeoutMs);
  return reply;
}

/** Gas of a call: its own `gas` (or the cap when absent), never above the RPC gas cap (geth's rule). */
function cappedGas(gas: bigint | undefined, cap: bigint): bigint {
  if (cap === 0n) return gas ?? UNCAPPED_GAS;
  return gas === undefined || gas > cap ? cap : gas;
}

/** Gas of a call when the operator set no cap (`--rpc-gascap 0`): the time limit alone bounds it. */
const UNCAPPED_GAS = 1n << 62n;

/**
 * One call on a snapshot of the head state (taken once no proposal is in flight), or on a view of the state
 * after block `height`, in the call pool or in-process. A timeout and a saturated pool become the node's errors.
 */
async function runAt(
  ctx: ChainContext,
  kind: CallKind,
  args: CallArgs,
  cap: bigint,
  height: CallHeight,
  floor?: bigint,
  overrides: QueryOverrides = {},
): Promise<CallReply> {
  const env = withBlockOverrides(await callEnv(ctx, height), overrides.block);
  let snapshot: CallState & { release(): void };
  if (height === undefined || height === 'pending') {
    await ctx.chain.settled();
    snapshot = ctx.chain.state.snapshot();
  } else snapshot = await stateAt(ctx, height);
  let reply: CallReply;
  try {
    reply = await runInCallPool(ctx, { kind, env, snapshot, args, cap, floor, overrides: { state: overrides.state } });
  } finally {
    snapshot.release();
  }
  if (reply.kind === 'refused') throw new ServerError(reply.message);
  return reply;
}

function callFailure(out: CallOutcome): NodeError {
  if (out.reverted) return new ExecutionRevertedError(revertReason(out.returnValue), to0x(out.returnValue));
  return evmFailure(out.error);
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

export function evmFailure(evmError: string | undefined): ServerError {
  const raw = evmError ?? 'execution failed';
  for (const [re, words] of GETH_CALL_ERRORS) {
    if (!re.test(raw)) continue;
    return new ServerError(raw.toLowerCase().startsWith(words) ? raw : `${words}: ${raw}`);
  }
  return new ServerError(raw);
}

/** The spec's eth_estimateGas floor for a transaction carrying data ("21000 for a transfer, 100000 with data"). */
export const DATA_GAS_FLOOR = 100_000n;

/** eth_call: output bytes, or ExecutionRevertedError (code 3) / ServerError for other EVM errors. */
export async function ethCall(
  ctx: ChainContext,
  args: CallArgs,
  height?: CallHeight,
  overrides?: QueryOverrides,
): Promise<Uint8Array> {
  const gas = cappedGas(args.gas, callRunnerOf(ctx).gasCap);
  const reply = await runAt(ctx, 'call', { ...args, gas }, gas, height, undefined, overrides);
  if (reply.kind !== 'call') throw new Error(`unexpected call reply ${reply.kind}`);
  if (reply.outcome.ok) return reply.outcome.returnValue;
  throw callFailure(reply.outcome);
}

/**
 * eth_estimateGas: 21000 for a plain transfer to an account without code, else a binary search (as geth)
 * for the lowest gas limit at which the call succeeds, up to the call's `gas`, else the block gas limit,
 * never above the RPC gas cap; on mainnet and testnet raised to the spec's 100000 when the transaction carries data.
 */
export async function estimateGas(
  ctx: NodeContext,
  args: CallArgs,
  height?: CallHeight,
  overrides?: QueryOverrides,
): Promise<bigint> {
  // From osaka on (EIP-7825) no transaction may have more gas than the cap: the search stops there, as geth's.
  const txCap = transactionGasCap(ctx.chain.params, ctx.chain.height + 1);
  const blockLimit = blockGasLimitOf(ctx.chain.params);
  const top = cappedGas(args.gas ?? (txCap < blockLimit ? txCap : blockLimit), callRunnerOf(ctx).gasCap);
  // The spec's floor with data on its networks, never above the caller's own cap (a transaction limited below it
  // still gets an answer). The dev chain answers the exact estimate, as Hardhat and anvil (docs/evm.md).
  const withData = ctx.chain.params.network !== 'dev' && args.data !== undefined && args.data.length > 0;
  const floor = withData ? (DATA_GAS_FLOOR < top ? DATA_GAS_FLOOR : top) : 0n;
  const reply = await runAt(ctx, 'estimate', args, top, height, floor, overrides);
  if (reply.kind !== 'estimate') throw new Error(`unexpected estimate reply ${reply.kind}`);
  const out = reply.outcome;
  if (out.ok) return out.gas > floor ? out.gas : floor;
  if (!out.failure.reverted && out.failure.error === 'out of gas') {
    throw new ServerError(`gas required exceeds allowance (${out.cap})`);
  }
  throw callFailure(out.failure);
}

/**
 * eth_createAccessList: the addresses and slots the call touches (geth's iteration until the list is
 * stable) and the gas it uses with that list; a failing call still answers, with its error.
 */
export async function createAccessList(
  ctx: NodeContext,
  args: CallArgs,
  height?: CallHeight,
  overrides?: QueryOverrides,
): Promise<AccessListOutcome> {
  const gas = cappedGas(args.gas ?? blockGasLimitOf(ctx.chain.params), callRunnerOf(ctx).gasCap);
  const reply = await runAt(ctx, 'accessList', { ...args, gas }, gas, height, undefined, overrides);
  if (reply.kind !== 'accessList') throw new Error(`unexpected access list reply ${reply.kind}`);
  return reply.outcome;
}

/** geth's `error` text of a failed call (eth_createAccessList reports it next to the list). */
export function callErrorText(out: CallOutcome): string {
  return callFailure(out).message;
}

/** Code of an account (empty when it has none), read from `state` (the head state when absent). */
export function codeAt(ctx: ChainContext, address: string, state: StateReader = ctx.chain.state): Uint8Array {
  return state.get(codeKey(address.toLowerCase())) ?? new Uint8Array(0);
}

/** 32-byte value of a storage slot (zero when unset), read from `state` (the head state when absent). */
export function storageAt(ctx: ChainContext, address: string, slot: bigint, state: StateReader = ctx.chain.state): Uint8Array {
  const slotBytes = fromHex(slot.toString(16).padStart(64, '0'));
  const v = state.get(storageKey(fromHex(address), slotBytes));
  const out = new Uint8Array(32);
  if (v) out.set(v, 32 - v.length);
  return out;
}

/** Code of an account after block `height` (the head when undefined). */
export function codeAtHeight(ctx: ChainContext, address: string, height: number | undefined): Promise<Uint8Array> {
  return withStateAt(ctx, height, (s) => codeAt(ctx, address, s));
}

/** A storage slot after block `height` (the head when undefined). */
export function storageAtHeight(
  ctx: ChainContext,
  address: string,
  slot: bigint,
  height: number | undefined,
): Promise<Uint8Array> {
  return withStateAt(ctx, height, (s) => storageAt(ctx, address, slot, s));
}

/** Receipts of a block with each one's block-level first log index. */
export async function blockReceipts(ctx: ChainContext, height: number): Promise<LocatedReceipt[] | null> {
  const rs = await ctx.chain.blocks.receipts(height);
  return rs ? locateReceipts(height, rs) : null;
}

/** A block with its located receipts; null above the head or when the store has either missing. */
export async function blockWithReceipts(
  ctx: ChainContext,
  height: number,
): Promise<{ block: Block; receipts: LocatedReceipt[] } | null> {
  if (height > ctx.chain.height) return null;
  const [block, receipts] = await Promise.all([ctx.chain.blocks.getBlock(height), blockReceipts(ctx, height)]);
  return block && receipts ? { block, receipts } : null;
}

/** A committed transaction's block, position and receipt (eth_getTransactionReceipt); null when not committed. */
export async function receiptOfTransaction(
  ctx: ChainContext,
  txid: string,
): Promise<{ block: Block; index: number; receipt: LocatedReceipt } | null> {
  const found = await committedTransaction(ctx, txid);
  const receipt = found && (await blockReceipts(ctx, found.block.index))?.[found.index];
  return found && receipt ? { block: found.block, index: found.index, receipt } : null;
}
