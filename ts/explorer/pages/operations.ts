/**
 * A native operation and the events it recorded, as the transaction page shows them: every field, addresses
 * linked (validators to their validator page), tokens linked and named, token amounts in the token's units,
 * coin amounts in coins; the SRC-20 balance movements of the transaction as a table.
 */
import {
  type NodeContext,
  type TokenRecord,
  type TxSummary,
  findValidator,
  getToken,
  tokenTransferRow,
} from '../../services/index.js';
import { coins, coinsWei, tokenAmount } from '../format.js';
import { links } from '../links.js';
import { type AddrView, addrView } from '../rows.js';

export interface FieldView {
  k: string;
  v: string;
  link: AddrView | null;
}

const ADDRESS = /^0x[0-9a-f]{40}$/;
const TOKEN = /^SRC20_[0-9a-fA-F]{40}$/;
/** Staking fields that hold coin amounts in base units (events carry rewards and commission paid in wei). */
const COIN_FIELDS = /^(amount|stake)$/;
const WEI_EVENTS = new Set(['RewardsClaimed', 'CommissionClaimed']);
/** Token fields that hold amounts in the token's units. */
const TOKEN_AMOUNT_FIELDS = /^(amount|supply|max_supply|before|after)$/;

/** Tokens of one page by contract, each read once. */
function tokenLookup(ctx: NodeContext): (contract: string) => TokenRecord | null {
  const seen = new Map<string, TokenRecord | null>();
  return (contract) => {
    if (!seen.has(contract)) seen.set(contract, getToken(ctx, contract));
    return seen.get(contract) ?? null;
  };
}

/** A token linked to its page and named "Name (SYMBOL)" when it exists. */
export const tokenLink = (contract: string, t: TokenRecord | null): AddrView => ({
  value: contract,
  label: t ? `${t.name} (${t.symbol})` : contract,
  href: links.token(contract),
});

/** An address or token value linked to its page (validators to their validator page). */
function linkOf(ctx: NodeContext, token: (c: string) => TokenRecord | null, v: string): AddrView | null {
  if (ADDRESS.test(v)) {
    const validator = findValidator(ctx, v);
    return validator ? { value: v, label: validator.name, href: links.validator(v) } : addrView(v);
  }
  if (TOKEN.test(v)) return tokenLink(v, token(v));
  return null;
}

export interface OperationViews {
  op: { name: string; family: string; fields: FieldView[]; token: AddrView | null } | null;
  events: { type: string; fields: FieldView[] }[];
  /** SRC-20 balance movements (deploy, transfers, mints, burns) the transaction made. */
  tokenMoves: { kind: string; token: AddrView; from: AddrView; to: AddrView; amount: string }[];
}

/** The decoded operation of a native transaction, its events and its token movements. */
export function operationViews(ctx: NodeContext, s: TxSummary): OperationViews {
  const token = tokenLookup(ctx);
  // A deploy names its contract only in its event.
  const deployed = s.events.find((e) => e.type === 'TokenDeploy')?.fields.contract;
  const fields = s.op?.fields ?? {};
  const opContract = typeof fields.contract === 'string' ? fields.contract : (deployed ?? null);
  const opToken = opContract ? token(opContract) : null;
  /** Decimals and symbol of a deploy not applied (failed or pending): from its own fields. */
  const units = (t: TokenRecord | null) =>
    t ?? (s.op?.name === 'Deploy' ? { decimals: Number(fields.decimals ?? 0), symbol: String(fields.symbol ?? '') } : null);
  const amountIn = (t: { decimals: number; symbol: string } | null, v: bigint) =>
    t ? tokenAmount(v, t.decimals, t.symbol) : v.toString();
  const opFields = Object.entries(fields).map(([k, v]): FieldView => {
    if (typeof v === 'string') return { k, v, link: linkOf(ctx, token, v) };
    if (typeof v === 'bigint' && s.op?.family === 'token' && TOKEN_AMOUNT_FIELDS.test(k))
      return { k, v: amountIn(units(opToken), v), link: null };
    if (typeof v === 'bigint' && s.op?.family === 'staking' && COIN_FIELDS.test(k)) return { k, v: coins(v), link: null };
    if (typeof v === 'bigint' && k.endsWith('_bps')) return { k, v: `${v} bps (${Number(v) / 100}%)`, link: null };
    return { k, v: v === null ? 'null' : String(v), link: null };
  });
  const events = s.events.map((e) => {
    const t = e.fields.contract && TOKEN.test(e.fields.contract) ? token(e.fields.contract) : null;
    return {
      type: e.type,
      fields: Object.entries(e.fields).map(([k, v]): FieldView => {
        if (/^\d+$/.test(v) && t && TOKEN_AMOUNT_FIELDS.test(k)) return { k, v: amountIn(t, BigInt(v)), link: null };
        if (/^\d+$/.test(v) && s.op?.family === 'staking' && COIN_FIELDS.test(k))
          return { k, v: WEI_EVENTS.has(e.type) ? coinsWei(BigInt(v)) : coins(BigInt(v)), link: null };
        return { k, v, link: linkOf(ctx, token, v) };
      }),
    };
  });
  const tokenMoves = s.events.flatMap((e) => {
    const row = tokenTransferRow(e);
    if (!row) return [];
    const t = token(e.fields.contract);
    return [
      {
        kind: row.kind,
        token: tokenLink(e.fields.contract, t),
        from: addrView(row.from),
        to: addrView(row.to),
        amount: amountIn(t, row.amount),
      },
    ];
  });
  return {
    op: s.op
      ? {
          name: s.op.name,
          family: s.op.family,
          fields: opFields,
          // A deploy's contract is not one of its fields: named here (other operations link their `contract` field).
          token: deployed && typeof fields.contract !== 'string' ? tokenLink(deployed, opToken) : null,
        }
      : null,
    events,
    tokenMoves,
  };
}
