/**
 * Token-standard (ERC-20-like) EVM tokens held by an address: contracts found through the log index
 * (Transfer logs whose recipient topic is the address), balances and metadata read by eth_call.
 */
import { EvmBusyError, NodeError, fromHex, to0x } from '../util/index.js';
import type { ChainContext } from './context.js';
import { ethCall } from './evm-queries.js';
import { findLogs } from './log-queries.js';

/** keccak256("Transfer(address,address,uint256)"): topic 0 of ERC-20 (and ERC-721) Transfer logs. */
export const TRANSFER_TOPIC = fromHex('ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
/** Contracts examined per request: the most recently active ones (bounds the eth_calls a request makes). */
export const MAX_ACCOUNT_TOKENS = 100;
/** Gas for each metadata/balance call: ample for a token's view functions, small enough to bound a hostile contract. */
export const TOKEN_CALL_GAS = 200_000n;

const SELECTOR = { balanceOf: '70a08231', name: '06fdde03', symbol: '95d89b41', decimals: '313ce567' } as const;
const MAX_TEXT = 128;

export interface EvmTokenHolding {
  /** Token contract, 0x + 40 lowercase hex. */
  contract: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  /** balanceOf(address) in the token's base units, as a decimal string. */
  balance: string;
}

const word = (b: Uint8Array, at: number): bigint => BigInt(to0x(b.subarray(at, at + 32)));

/** Return data of a view call, or null when the contract reverts, fails or is not there. */
async function view(ctx: ChainContext, contract: string, selector: string, arg = ''): Promise<Uint8Array | null> {
  try {
    return await ethCall(ctx, { to: contract, data: fromHex(selector + arg), gas: TOKEN_CALL_GAS });
  } catch (err) {
    // A saturated call pool is the node's state, not the token's: the request fails (503) instead.
    if (err instanceof NodeError && !(err instanceof EvmBusyError)) return null;
    throw err;
  }
}

/** An ABI string (or the bytes32 some older tokens return), trimmed of NULs; null when malformed. */
export function abiText(out: Uint8Array | null): string | null {
  if (!out) return null;
  let bytes: Uint8Array;
  if (out.length === 32) bytes = out;
  else {
    if (out.length < 64) return null;
    const offset = word(out, 0);
    if (offset > BigInt(out.length - 32)) return null;
    const len = word(out, Number(offset));
    const start = Number(offset) + 32;
    if (len > BigInt(out.length - start)) return null;
    bytes = out.subarray(start, start + Number(len));
  }
  const text = Buffer.from(bytes).toString('utf8').replace(/\0+$/g, '');
  return text.length <= MAX_TEXT ? text : text.slice(0, MAX_TEXT);
}

/**
 * GET /accounts/{address}/tokens: every contract that emitted Transfer(from, to = address, value) with the
 * ERC-20 shape (3 topics), whose balanceOf(address) answers and is non-zero. Cost: one receipts read per
 * block in which the address received such a transfer, then up to 4 eth_calls per contract.
 */
export async function accountTokens(ctx: ChainContext, address: string): Promise<{ address: string; tokens: EvmTokenHolding[] }> {
  const holder = address.toLowerCase();
  const holderTopic = Buffer.concat([Buffer.alloc(12), fromHex(holder)]);
  // Only the holder's slot is looked up (topic 0 is shared by every token's transfers); topic 0 is checked here.
  const found = await findLogs(ctx, {
    fromBlock: 0,
    toBlock: ctx.chain.height,
    addresses: [],
    topics: [null, null, [holderTopic]],
  });
  const lastSeen = new Map<string, number>();
  for (const { log, at } of found) {
    if (log.topics.length === 3 && Buffer.compare(log.topics[0], TRANSFER_TOPIC) === 0)
      lastSeen.set(to0x(log.address), at.blockNumber);
  }
  const contracts = [...lastSeen]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_ACCOUNT_TOKENS)
    .map(([c]) => c)
    .sort();
  const tokens: EvmTokenHolding[] = [];
  for (const contract of contracts) {
    const out = await view(ctx, contract, SELECTOR.balanceOf, holderTopic.toString('hex'));
    if (!out || out.length < 32) continue;
    const balance = word(out, 0);
    if (balance === 0n) continue;
    const decimals = await view(ctx, contract, SELECTOR.decimals);
    const d = decimals && decimals.length >= 32 ? word(decimals, 0) : null;
    tokens.push({
      contract,
      name: abiText(await view(ctx, contract, SELECTOR.name)),
      symbol: abiText(await view(ctx, contract, SELECTOR.symbol)),
      decimals: d !== null && d <= 255n ? Number(d) : null,
      balance: balance.toString(),
    });
  }
  return { address: holder, tokens };
}
