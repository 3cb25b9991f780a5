import { NS, getAccount } from '../state/accounts.js';
import { keyStr } from '../state/state-store.js';
import { baseToNative, weiToBase } from '../ledger/units.js';
import { fromHex, to0x } from '../util/hex.js';
import { getPendingNonce } from './account-queries.js';
import { chainIndex } from './chain-index.js';
import type { NodeContext } from './context.js';

/**
 * State key of an account's contract code: NS.code || address (20 bytes). The EVM issue writes it; until then
 * no account has code.
 */
const codeKey = (address: string): string => keyStr(Buffer.concat([Buffer.from([NS.code]), fromHex(address)]));

/** Contract bytecode as 0x-hex, "0x" when the account has none. */
export function accountCode(ctx: NodeContext, address: string): string {
  const code = ctx.chain.state.get(codeKey(address.toLowerCase()));
  return code && code.length > 0 ? to0x(code) : '0x';
}

export const isContract = (ctx: NodeContext, address: string): boolean => accountCode(ctx, address) !== '0x';

export interface AddressInfo {
  address: string;
  balance: bigint;
  nonce: bigint;
  tx_count: number;
  is_contract: boolean;
}

/** GET /address/{address}/info. */
export function addressInfo(ctx: NodeContext, address: string): AddressInfo {
  const a = address.toLowerCase();
  const acc = getAccount(ctx.chain.state, a);
  return {
    address: a,
    balance: weiToBase(acc.balance),
    nonce: acc.nonce,
    tx_count: ctx.chain.blocks.txCount(a),
    is_contract: isContract(ctx, a),
  };
}

/** SRC-20 balances held by address (the token module is not active: none). */
export function accountTokens(
  _ctx: NodeContext,
  address: string,
): { address: string; tokens: { contract: string; balance: bigint }[] } {
  return { address: address.toLowerCase(), tokens: [] };
}

interface Activity {
  height: number;
  timestamp: number;
  txid: string;
}

async function activityAt(ctx: NodeContext, loc: { height: number; index: number } | null | undefined): Promise<Activity | null> {
  if (!loc) return null;
  const b = await ctx.chain.blocks.getBlock(loc.height);
  const tx = b?.transactions[loc.index];
  return b && tx ? { height: b.index, timestamp: b.timestamp, txid: tx.txid } : null;
}

/** GET /wallets/{address}: balance, nonces, counts and a summary of the address's activity. */
export async function walletView(ctx: NodeContext, address: string): Promise<Record<string, unknown>> {
  const info = addressInfo(ctx, address);
  const a = info.address;
  const [last] = await ctx.chain.blocks.addressHistory(a, 0, 1);
  const validator = ctx.chain.params.validators.find((v) => v.address === a);
  const idx = validator ? await chainIndex(ctx) : null;
  return {
    address: a,
    balance: info.balance,
    balance_native: baseToNative(info.balance),
    nonce: info.nonce,
    pending_nonce: getPendingNonce(ctx, a),
    tx_count: info.tx_count,
    is_contract: info.is_contract,
    tokens: accountTokens(ctx, a).tokens,
    summary: {
      pending_transactions: ctx.mempool.pendingOf(a).length,
      pending_spend: ctx.mempool.pendingSpend(a),
      first_transaction: await activityAt(ctx, await ctx.chain.blocks.firstAddressTx(a)),
      last_transaction: await activityAt(ctx, last),
      is_validator: validator !== undefined,
      blocks_produced: idx?.producers.get(a)?.blocks ?? 0,
      token_count: 0,
    },
  };
}
