import { getAccount } from '../state/index.js';
import { baseToNative, weiToBase } from '../ledger/index.js';
import { to0x } from '../util/index.js';
import { getPendingNonce } from './account-queries.js';
import { chainIndex } from '../indexes/index.js';
import type { NodeContext } from './context.js';
import { codeAt } from './evm-queries.js';

/** Contract bytecode (state namespace NS.code, written by the EVM) as 0x-hex, "0x" when the account has none. */
export const accountCode = (ctx: NodeContext, address: string): string => to0x(codeAt(ctx, address));

/** True when the account has code (a deployed contract). */
export const isContract = (ctx: NodeContext, address: string): boolean => codeAt(ctx, address).length > 0;

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
    // SRC-20 holdings (none until the token module); EVM tokens are listed by /accounts/{a}/tokens.
    tokens: [],
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
