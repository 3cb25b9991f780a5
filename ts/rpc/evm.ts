import type { CallArgs } from '../execution/index.js';
import {
  type CallHeight,
  type NodeContext,
  blockWithReceipts,
  callErrorText,
  codeAtHeight,
  createAccessList,
  estimateGas,
  ethCall,
  ethLog,
  ethReceipt,
  ethChainFacts,
  receiptOfTransaction,
  resolveBlockHeight,
  storageAtHeight,
} from '../services/index.js';
import { NodeError, isAddress, isHash, normHash, qty, to0x } from '../util/index.js';
import { stateHeightOf } from './eth.js';
import { blockRefOf, parseQuantity, parseStorageKey } from './params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';
import { getLogs } from './logs.js';
import { callOverrides, parseFeeFields } from './override-params.js';

/** 0x and hex digits; with an even length, whole bytes (cheaper than matching digit pairs on every request). */
const DATA_RE = /^0x[0-9a-fA-F]*$/;
const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

function hexData(v: unknown, what: string): Uint8Array {
  if (typeof v !== 'string' || v.length % 2 !== 0 || !DATA_RE.test(v))
    throw invalidParams(`invalid argument 0: ${what} must be 0x-prefixed hex bytes`);
  return Buffer.from(v.slice(2), 'hex'); // checked just above: no second pass through fromHex's check
}

/** The call object of eth_call / eth_estimateGas (geth field names; `input` wins over `data`). */
export function parseCallArgs(raw: unknown): CallArgs {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidParams('invalid argument 0: expected a call object');
  const o = raw as Record<string, unknown>;
  const args: CallArgs = {};
  for (const f of ['from', 'to'] as const) {
    if (o[f] === undefined || o[f] === null) continue;
    if (!isAddress(o[f])) throw invalidParams(`invalid argument 0: ${f} must be 0x + 40 hex characters`);
    args[f] = (o[f] as string).toLowerCase();
  }
  const data = o.input ?? o.data;
  if (data !== undefined && data !== null) args.data = hexData(data, 'data');
  if (o.value !== undefined && o.value !== null) args.value = parseQuantity(o.value, 0);
  // Capped by the services layer (--rpc-gascap), like geth.
  if (o.gas !== undefined && o.gas !== null) args.gas = parseQuantity(o.gas, 0);
  if (o.accessList !== undefined && o.accessList !== null) args.accessList = parseAccessList(o.accessList);
  parseFeeFields(o, args);
  return args;
}

/** EIP-2930 access list of a call object: [{ address, storageKeys: [32-byte hex] }]. */
function parseAccessList(raw: unknown): NonNullable<CallArgs['accessList']> {
  const bad = () => invalidParams('invalid argument 0: accessList must be [{ address, storageKeys: [0x + 64 hex] }]');
  if (!Array.isArray(raw)) throw bad();
  return raw.map((item) => {
    if (typeof item !== 'object' || item === null || !isAddress((item as { address?: unknown }).address)) throw bad();
    const keys = (item as { storageKeys?: unknown }).storageKeys ?? [];
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string' && HASH_RE.test(k))) throw bad();
    return { address: (item as { address: string }).address.toLowerCase(), storageKeys: keys as string[] };
  });
}

/** The block a call runs at: `pending` apart from `latest` (services' callEnv: the next block, or the head's header). */
function callHeightOf(ctx: NodeContext, ref: unknown, i: number): Promise<CallHeight> {
  return ref === 'pending' ? Promise.resolve('pending') : stateHeightOf(ctx, ref, i);
}

/**
 * A call that failed in a way the EVM layer did not name still answers its reason (-32000 with the message,
 * as geth does), never a bare "internal error" with the cause only in the log.
 */
async function reasoned<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof NodeError) throw err;
    throw new RpcError(RPC.server, (err as Error)?.message || 'execution failed');
  }
}

async function receiptByHash(ctx: NodeContext, hash: string): Promise<unknown> {
  const found = await receiptOfTransaction(ctx, hash);
  if (!found) return null;
  const { chainId, evmHardfork } = ethChainFacts(ctx);
  const r = found.receipt;
  return ethReceipt(found.block, found.index, r.receipt, r.firstLogIndex, chainId, evmHardfork);
}

async function receiptsOfBlock(ctx: NodeContext, ref: unknown): Promise<unknown> {
  const height = await resolveBlockHeight(ctx, blockRefOf(ref, 0));
  const found = height === null ? null : await blockWithReceipts(ctx, height);
  if (!found) return null;
  const { chainId, evmHardfork } = ethChainFacts(ctx);
  return found.receipts.map((r) => ethReceipt(found.block, r.index, r.receipt, r.firstLogIndex, chainId, evmHardfork));
}

/** The spec's eth_ methods that need the EVM (gated by the EVM activation height in index.ts). */
export const evmMethods: RpcTable = {
  eth_sendRawTransaction: {
    params: ['any'],
    handler: async (ctx, [raw]) => {
      const bytes = hexData(raw, 'raw transaction');
      if (bytes.length === 0) throw invalidParams('invalid argument 0: empty raw transaction');
      // Dev chain with automine: answer once the transaction's block is committed (Hardhat, anvil); the block
      // then keeps it, not the transaction journal.
      const tx = await ctx.admission.submitRaw(bytes, 'api', { answeredOnceMined: ctx.dev?.minesOnAdmission === true });
      await ctx.dev?.mined(tx.txid);
      return `0x${tx.txid}`;
    },
  },
  eth_call: {
    params: ['object', 'blockRef?', 'any?', 'any?'],
    handler: async (ctx, [call, ref, state, block]) => {
      const args = parseCallArgs(call);
      const overrides = callOverrides(state, block);
      return to0x(await reasoned(ethCall(ctx, args, await callHeightOf(ctx, ref, 1), overrides)));
    },
  },
  eth_estimateGas: {
    params: ['object', 'blockRef?', 'any?', 'any?'],
    handler: async (ctx, [call, ref, state, block]) => {
      const args = parseCallArgs(call);
      const overrides = callOverrides(state, block);
      return qty(await reasoned(estimateGas(ctx, args, await callHeightOf(ctx, ref, 1), overrides)));
    },
  },
  eth_createAccessList: {
    // geth takes state overrides here, no block overrides.
    params: ['object', 'blockRef?', 'any?'],
    handler: async (ctx, [call, ref, state]) => {
      const args = parseCallArgs(call);
      const overrides = callOverrides(state, undefined);
      const out = await reasoned(createAccessList(ctx, args, await callHeightOf(ctx, ref, 1), overrides));
      const answer: Record<string, unknown> = { accessList: out.accessList, gasUsed: qty(out.gasUsed) };
      if (out.failure) answer.error = callErrorText(out.failure);
      return answer;
    },
  },
  eth_getCode: {
    params: ['address', 'blockRef?'],
    handler: async (ctx, [a, ref]) => {
      return to0x(await codeAtHeight(ctx, a as string, await stateHeightOf(ctx, ref, 1)));
    },
  },
  eth_getStorageAt: {
    params: ['address', 'storageKey', 'blockRef?'],
    handler: async (ctx, [a, slot, ref]) => {
      const s = parseStorageKey(slot, 1);
      return to0x(await storageAtHeight(ctx, a as string, s, await stateHeightOf(ctx, ref, 2)));
    },
  },
  eth_getTransactionReceipt: { params: ['hash'], handler: (ctx, [h]) => receiptByHash(ctx, h as string) },
  eth_getBlockReceipts: { params: ['blockRef'], handler: (ctx, [ref]) => receiptsOfBlock(ctx, ref) },
  eth_getLogs: {
    params: ['object'],
    handler: async (ctx, [filter]) => {
      const logs = await getLogs(ctx, filter);
      return logs.map((l) => ethLog(l.log, l.at));
    },
  },
};

export const EVM_METHOD_NAMES = Object.keys(evmMethods);
export { RPC, RpcError };
