/**
 * eth_simulateV1 (geth's shape): `[{ blockStateCalls, validation, traceTransfers, returnFullTransactions },
 * block?]` in, one block per simulated block out, each with its `calls` results (docs/evm.md).
 */
import {
  type CallArgs,
  EMPTY_BLOOM,
  MAX_SIMULATE_BLOCKS,
  MAX_SIMULATE_CALLS_PER_BLOCK,
  MAX_SIMULATE_TOTAL_CALLS,
  SIM_ERROR_CODES,
  type SimBlockResult,
  type SimBlockSpec,
  type SimTx,
  logsBloom,
} from '../execution/index.js';
import { type NodeContext, chainIdOf, simulateV1 } from '../services/index.js';
import { qty, to0x } from '../util/index.js';
import { stateHeightOf } from './eth.js';
import { parseCallArgs } from './evm.js';
import { parseBlockOverrides, parseStateOverrides } from './override-params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';

const ZERO32 = `0x${'00'.repeat(32)}`;
const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const EMPTY_TRIE = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const OPTION_FIELDS = new Set(['blockStateCalls', 'validation', 'traceTransfers', 'returnFullTransactions']);
const BLOCK_FIELDS = new Set(['blockOverrides', 'stateOverrides', 'calls']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function flag(o: Record<string, unknown>, key: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalidParams(`invalid argument 0: ${key} must be a boolean`);
  return v;
}

/** A call object of a simulated block; its errors name where it sits. */
function simCall(raw: unknown, where: string): CallArgs {
  try {
    return parseCallArgs(raw);
  } catch (err) {
    if (err instanceof RpcError && err.rpcCode === RPC.invalidParams) {
      throw invalidParams(err.message.replace(/^invalid argument 0: /, `invalid argument 0: ${where}: `));
    }
    throw err;
  }
}

/** geth's clientLimitExceededError. */
const tooMany = (message: string) => new RpcError(SIM_ERROR_CODES.clientLimitExceeded, message);

export interface SimulateParams {
  blocks: SimBlockSpec[];
  validation: boolean;
  traceTransfers: boolean;
  fullTx: boolean;
}

/** The options object, with geth's limits on blocks and calls checked before anything runs. */
export function parseSimulateOptions(raw: unknown): SimulateParams {
  if (!isObject(raw)) throw invalidParams('invalid argument 0: expected an object with blockStateCalls');
  for (const key of Object.keys(raw)) {
    if (!OPTION_FIELDS.has(key)) {
      throw invalidParams(
        `invalid argument 0: unknown field ${key.slice(0, 64)} (blockStateCalls, validation, traceTransfers, returnFullTransactions)`,
      );
    }
  }
  const list = raw.blockStateCalls;
  if (list !== undefined && list !== null && !Array.isArray(list)) {
    throw invalidParams('invalid argument 0: blockStateCalls must be an array');
  }
  if (!list || list.length === 0) throw invalidParams('empty input');
  if (list.length > MAX_SIMULATE_BLOCKS) throw tooMany('too many blocks');
  let total = 0;
  const blocks = list.map((b: unknown, i: number): SimBlockSpec => {
    const at = `blockStateCalls[${i}]`;
    if (!isObject(b)) throw invalidParams(`invalid argument 0: ${at} must be an object`);
    for (const key of Object.keys(b)) {
      if (!BLOCK_FIELDS.has(key)) {
        throw invalidParams(
          `invalid argument 0: ${at}: unknown field ${key.slice(0, 64)} (blockOverrides, stateOverrides, calls)`,
        );
      }
    }
    const calls = b.calls ?? [];
    if (!Array.isArray(calls)) throw invalidParams(`invalid argument 0: ${at}.calls must be an array`);
    if (calls.length > MAX_SIMULATE_CALLS_PER_BLOCK) {
      throw tooMany(`too many calls in block: ${calls.length} > ${MAX_SIMULATE_CALLS_PER_BLOCK}`);
    }
    total += calls.length;
    if (total > MAX_SIMULATE_TOTAL_CALLS) throw tooMany(`too many calls: ${total} > ${MAX_SIMULATE_TOTAL_CALLS}`);
    return {
      block: parseBlockOverrides(b.blockOverrides, `invalid argument 0: ${at}.blockOverrides`, true),
      state: parseStateOverrides(b.stateOverrides, `invalid argument 0: ${at}.stateOverrides`),
      calls: calls.map((c, j) => simCall(c, `${at}.calls[${j}]`)),
    };
  });
  return {
    blocks,
    validation: flag(raw, 'validation'),
    traceTransfers: flag(raw, 'traceTransfers'),
    fullTx: flag(raw, 'returnFullTransactions'),
  };
}

/** A simulated transaction in eth_getTransactionByHash's shape (unsigned: v, r, s zero), `from` set as geth does. */
function txJson(tx: SimTx, b: SimBlockResult, index: number, chainId: number): Record<string, unknown> {
  return {
    type: '0x2',
    hash: to0x(tx.hash),
    nonce: qty(tx.nonce),
    blockHash: to0x(b.hash),
    blockNumber: qty(b.number),
    transactionIndex: qty(index),
    from: tx.from,
    to: tx.to,
    value: qty(tx.value),
    gas: qty(tx.gas),
    gasPrice: qty(tx.gasPrice),
    maxFeePerGas: qty(tx.maxFeePerGas),
    maxPriorityFeePerGas: qty(tx.maxPriorityFeePerGas),
    input: to0x(tx.input),
    accessList: tx.accessList,
    chainId: qty(chainId),
    v: '0x0',
    r: '0x0',
    s: '0x0',
    yParity: '0x0',
  };
}

/** One simulated block in geth's shape: the header fields, its transactions and the `calls` results. */
export function simBlockJson(b: SimBlockResult, fullTx: boolean, chainId: number): Record<string, unknown> {
  let logIndex = 0;
  const bloom = EMPTY_BLOOM();
  const calls = b.calls.map((c, i) => {
    logsBloom(
      c.logs.map((l) => ({ address: Buffer.from(l.address.slice(2), 'hex'), topics: l.topics, data: l.data })),
      bloom,
    );
    const out: Record<string, unknown> = {
      returnData: to0x(c.returnData),
      logs: c.logs.map((l) => ({
        address: l.address,
        topics: l.topics.map(to0x),
        data: to0x(l.data),
        blockNumber: qty(b.number),
        blockHash: to0x(b.hash),
        blockTimestamp: qty(b.timestamp),
        transactionHash: to0x(b.txs[i].hash),
        transactionIndex: qty(i),
        logIndex: qty(logIndex++),
        removed: false,
      })),
      gasUsed: qty(c.gasUsed),
      maxUsedGas: qty(c.maxUsedGas),
      status: qty(c.status),
    };
    if (c.error) out.error = c.error;
    return out;
  });
  return {
    number: qty(b.number),
    hash: to0x(b.hash),
    parentHash: to0x(b.parentHash),
    nonce: '0x0000000000000000',
    mixHash: to0x(b.prevRandao),
    sha3Uncles: EMPTY_UNCLES,
    logsBloom: to0x(bloom),
    transactionsRoot: EMPTY_TRIE,
    stateRoot: ZERO32,
    receiptsRoot: EMPTY_TRIE,
    miner: b.miner,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: qty(500 + 300 * b.txs.length),
    gasLimit: qty(b.gasLimit),
    gasUsed: qty(b.gasUsed),
    timestamp: qty(b.timestamp),
    baseFeePerGas: qty(b.baseFee),
    blobGasUsed: '0x0',
    excessBlobGas: '0x0',
    parentBeaconBlockRoot: ZERO32,
    withdrawals: [],
    withdrawalsRoot: EMPTY_TRIE,
    uncles: [],
    transactions: b.txs.map((tx, i) => (fullTx ? txJson(tx, b, i, chainId) : to0x(tx.hash))),
    calls,
  };
}

export const simulateMethods: RpcTable = {
  eth_simulateV1: {
    params: ['any', 'blockRef?'],
    handler: async (ctx: NodeContext, [opts, ref]) => {
      const p = parseSimulateOptions(opts);
      const height = await stateHeightOf(ctx, ref, 1);
      const out = await simulateV1(ctx, p, height);
      if (!out.ok) throw new RpcError(out.code, out.message);
      return out.blocks.map((b) => simBlockJson(b, p.fullTx, chainIdOf(ctx)));
    },
  },
};
