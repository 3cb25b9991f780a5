/**
 * SRC-20 read queries over a state reader (Cosmos `keeper/grpc_query.go`): a token with its holder count, a
 * holder's balance, and a balance-moving event as a feed row. ts/services resolves the height and the
 * context (indexes, 404s) and calls these; REST, JSON-RPC, gRPC and the explorer go through it.
 */
import type { StateReader } from '../../state/index.js';
import type { NativeEvent } from '../kit/events.js';
import { ZERO_ADDRESS } from '../kit/units.js';
import { TOKEN_EVENTS } from './events.js';
import { type TokenRecord, getToken, tokenBalance, tokenHolderCount } from './state.js';

/** A token as the APIs show it: the record and its number of holders. */
export interface TokenView extends TokenRecord {
  holders: number;
}

/** The token at `contract` (canonical form) with its holder count, or null when unknown. */
export function tokenView(state: StateReader, contract: string): TokenView | null {
  const t = getToken(state, contract);
  if (!t) return null;
  return {
    contract: t.contract,
    name: t.name,
    symbol: t.symbol,
    decimals: t.decimals,
    supply: t.supply,
    max_supply: t.max_supply,
    owner: t.owner,
    holders: tokenHolderCount(state, t.contract),
    deployed_at_height: t.deployed_at_height,
  };
}

/** A holder's balance of a known token, with the token's symbol and decimals. */
export function tokenBalanceView(
  state: StateReader,
  t: Pick<TokenRecord, 'contract' | 'symbol' | 'decimals'>,
  address: string,
): { contract: string; address: string; balance: bigint; symbol: string; decimals: number } {
  const a = address.toLowerCase();
  return {
    contract: t.contract,
    address: a,
    balance: tokenBalance(state, t.contract, a),
    symbol: t.symbol,
    decimals: t.decimals,
  };
}

/** The zero address as the counterparty of mints and burns in feeds. */
export const MINT_BURN_PARTY = ZERO_ADDRESS;

export interface TokenFeedRow {
  kind: 'deploy' | 'transfer' | 'mint' | 'burn';
  from: string;
  to: string;
  amount: bigint;
}

/** A balance-moving token event as a feed row (deploys and mints come from, burns go to, the zero address); null for others. */
export function tokenTransferRow(e: NativeEvent): TokenFeedRow | null {
  const f = e.fields;
  switch (e.type) {
    case TOKEN_EVENTS.deploy:
      return { kind: 'deploy', from: MINT_BURN_PARTY, to: f.deployer, amount: BigInt(f.supply) };
    case TOKEN_EVENTS.transfer:
      return { kind: 'transfer', from: f.from, to: f.to, amount: BigInt(f.amount) };
    case TOKEN_EVENTS.mint:
      return { kind: 'mint', from: MINT_BURN_PARTY, to: f.to, amount: BigInt(f.amount) };
    case TOKEN_EVENTS.burn:
      return { kind: 'burn', from: f.from, to: MINT_BURN_PARTY, amount: BigInt(f.amount) };
    default:
      return null;
  }
}
