/**
 * The dev chain's test-control methods (`--dev` only; elsewhere they do not exist: -32601), with the names
 * anvil and Hardhat give them, as Hardhat's network helpers and Foundry call them (docs/dev-chain.md).
 */
import { type DevChain, MAX_MINE_BLOCKS, devChainOf } from '../dev/index.js';
import type { NodeContext } from '../services/index.js';
import { fromHex } from '../util/index.js';
import { clientVersion } from './native.js';
import { parseQuantity, parseStorageKey } from './params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';

function devOf(ctx: NodeContext): DevChain {
  const dev = devChainOf(ctx);
  if (!dev) throw new RpcError(RPC.methodNotFound, 'this method exists on the dev chain only');
  return dev;
}

const DATA_RE = /^0x([0-9a-fA-F]{2})*$/;

function hexBytes(v: unknown, i: number, what: string): Uint8Array {
  if (typeof v !== 'string' || !DATA_RE.test(v))
    throw invalidParams(`invalid argument ${i}: ${what} must be 0x-prefixed hex bytes`);
  return fromHex(v);
}

/** Seconds or counts: a hex quantity or a plain JSON number, as the tools send either. */
function count(v: unknown, i: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = parseQuantity(v, i);
  if (n > BigInt(max)) throw invalidParams(`invalid argument ${i}: at most ${max}`);
  return Number(n);
}

/** evm_mine's argument: a timestamp, or anvil's { timestamp, blocks } options. */
function mineOptions(raw: unknown): { blocks: number; timestamp?: number } {
  if (raw === undefined || raw === null) return { blocks: 1 };
  if (typeof raw === 'object' && !Array.isArray(raw)) {
    const o = raw as { timestamp?: unknown; blocks?: unknown };
    return {
      blocks: o.blocks === undefined || o.blocks === null ? 1 : count(o.blocks, 0, MAX_MINE_BLOCKS),
      timestamp: o.timestamp === undefined || o.timestamp === null ? undefined : count(o.timestamp, 0),
    };
  }
  return { blocks: 1, timestamp: count(raw, 0) };
}

const mineBlocks = async (ctx: NodeContext, rawCount: unknown, rawInterval: unknown): Promise<void> => {
  const blocks = rawCount === undefined || rawCount === null ? 1 : count(rawCount, 0, MAX_MINE_BLOCKS);
  const intervalSecs = rawInterval === undefined || rawInterval === null ? 1 : count(rawInterval, 1);
  if (blocks > 0) await devOf(ctx).miner.mine(blocks, { intervalSecs });
};

const setAutomine = async (ctx: NodeContext, on: unknown): Promise<boolean> => {
  await devOf(ctx).miner.setAutomine(on === true);
  return true;
};

const setInterval = async (ctx: NodeContext, ms: unknown): Promise<boolean> => {
  await devOf(ctx).miner.setInterval(count(ms, 0));
  return true;
};

/** Methods with the same meaning under anvil_ and hardhat_ names. */
const aliased: RpcTable = {
  setBalance: {
    params: ['address', 'quantity'],
    handler: async (ctx, [a, wei]) => {
      await devOf(ctx).setBalance(a as string, parseQuantity(wei, 1));
      return true;
    },
  },
  setNonce: {
    params: ['address', 'quantity'],
    handler: async (ctx, [a, nonce]) => {
      const n = parseQuantity(nonce, 1);
      if (n >= 1n << 64n) throw invalidParams('invalid argument 1: nonce must fit in 64 bits');
      await devOf(ctx).setNonce(a as string, n);
      return true;
    },
  },
  setCode: {
    params: ['address', 'any'],
    handler: async (ctx, [a, code]) => {
      await devOf(ctx).setCode(a as string, hexBytes(code, 1, 'code'));
      return true;
    },
  },
  setStorageAt: {
    params: ['address', 'any', 'any'],
    handler: async (ctx, [a, slot, value]) => {
      const bytes = hexBytes(value, 2, 'value');
      if (bytes.length !== 32) throw invalidParams('invalid argument 2: storage value must be 32 bytes (0x + 64 hex)');
      const key = typeof slot === 'number' ? BigInt(slot) : parseStorageKey(slot, 1);
      await devOf(ctx).setStorageAt(a as string, key, BigInt(`0x${Buffer.from(bytes).toString('hex')}`));
      return true;
    },
  },
  impersonateAccount: {
    params: ['address'],
    handler: (ctx, [a]) => {
      devOf(ctx).accounts.impersonate(a as string);
      return true;
    },
  },
  stopImpersonatingAccount: {
    params: ['address'],
    handler: (ctx, [a]) => {
      devOf(ctx).accounts.stopImpersonating(a as string);
      return true;
    },
  },
  mine: {
    params: ['any?', 'any?'],
    handler: async (ctx, [n, interval]) => {
      await mineBlocks(ctx, n, interval);
      return true;
    },
  },
  getAutomine: { params: [], handler: (ctx) => devOf(ctx).miner.automine },
};

/** A snapshot id: a quantity, as Hardhat sends it (or a JSON number). */
function snapshotId(v: unknown): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return parseQuantity(v, 0);
}

/** anvil_reset / hardhat_reset take forking options; the dev chain has nothing to fork from. */
function resetOptions(raw: unknown): void {
  if (raw === undefined || raw === null) return;
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw invalidParams('invalid argument 0: expected reset options (an object)');
  const forking = (raw as { forking?: unknown }).forking;
  if ((forking !== undefined && forking !== null) || 'jsonRpcUrl' in raw) {
    throw invalidParams('invalid argument 0: forking is not supported: the dev chain resets to its own genesis');
  }
}

const snapshot = async (ctx: NodeContext): Promise<string> => `0x${(await devOf(ctx).snapshot()).toString(16)}`;
const revert = (ctx: NodeContext, id: unknown): Promise<boolean> => devOf(ctx).revert(snapshotId(id));
async function reset<T>(ctx: NodeContext, opts: unknown, answer: T): Promise<T> {
  resetOptions(opts);
  await devOf(ctx).reset();
  return answer;
}

export const devMethods: RpcTable = {
  ...Object.fromEntries(
    Object.entries(aliased).flatMap(([name, m]) => [
      [`anvil_${name}`, m],
      [`hardhat_${name}`, m],
    ]),
  ),
  evm_mine: {
    params: ['any?'],
    handler: async (ctx, [raw]) => {
      const { blocks, timestamp } = mineOptions(raw);
      await devOf(ctx).miner.mine(blocks, { timestamp });
      return '0x0';
    },
  },
  evm_snapshot: { params: [], handler: (ctx) => snapshot(ctx) },
  anvil_snapshot: { params: [], handler: (ctx) => snapshot(ctx) },
  evm_revert: { params: ['any'], handler: (ctx, [id]) => revert(ctx, id) },
  anvil_revert: { params: ['any'], handler: (ctx, [id]) => revert(ctx, id) },
  // Hardhat answers true, anvil null.
  hardhat_reset: { params: ['any?'], handler: (ctx, [opts]) => reset(ctx, opts, true) },
  anvil_reset: { params: ['any?'], handler: (ctx, [opts]) => reset(ctx, opts, null) },
  evm_setAutomine: { params: ['bool'], handler: (ctx, [on]) => setAutomine(ctx, on) },
  anvil_setAutomine: { params: ['bool'], handler: (ctx, [on]) => setAutomine(ctx, on) },
  evm_setIntervalMining: { params: ['any'], handler: (ctx, [ms]) => setInterval(ctx, ms) },
  anvil_setIntervalMining: { params: ['any'], handler: (ctx, [secs]) => setInterval(ctx, count(secs, 0) * 1000) },
  evm_increaseTime: {
    params: ['any'],
    // Hardhat answers the total offset in seconds, as a decimal string.
    handler: (ctx, [secs]) => String(devOf(ctx).clock.increase(count(secs, 0))),
  },
  anvil_increaseTime: { params: ['any'], handler: (ctx, [secs]) => String(devOf(ctx).clock.increase(count(secs, 0))) },
  evm_setNextBlockTimestamp: {
    params: ['any'],
    handler: (ctx, [ts]) => {
      devOf(ctx).clock.setNext(count(ts, 0));
      return null;
    },
  },
  anvil_setNextBlockTimestamp: {
    params: ['any'],
    handler: (ctx, [ts]) => {
      devOf(ctx).clock.setNext(count(ts, 0));
      return null;
    },
  },
};

/** With `--anvil-compat`: web3_clientVersion starts with `anvil/`, the prefix Hardhat's network helpers require. */
export const anvilCompatMethods: RpcTable = {
  web3_clientVersion: { params: [], handler: (ctx) => `anvil/v${ctx.version}/${clientVersion(ctx.version)}` },
};
