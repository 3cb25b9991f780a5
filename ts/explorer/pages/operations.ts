/**
 * A native operation and the events it recorded, as the transaction page shows them: every field, addresses
 * linked (validators to their validator page), tokens and NFT collections linked and named, NFT ids linked to
 * their token page, token amounts in the token's units, coin amounts in coins (URIs stay text); the SRC-20
 * balance movements of the transaction as a table.
 */
import {
  type CollectionInfo,
  type NodeContext,
  type TokenRecord,
  findValidator,
  getToken,
  nftCollection,
  tokenTransferRow,
} from '../../services/index.js';
import type { TxSummary } from '../read-model.js';
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
const COLLECTION = /^SRC721_[0-9a-f]{40}$/;
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

/** An NFT collection linked to its page and named "Name (SYMBOL)" when it exists. */
const collectionLink = (address: string, c: CollectionInfo | null): AddrView => ({
  value: address,
  label: c ? `${c.name} (${c.symbol})` : address,
  href: links.collection(address),
});

interface Lookups {
  token: (contract: string) => TokenRecord | null;
  collections: ReadonlyMap<string, CollectionInfo | null>;
}

/** An address, token or collection value linked to its page (validators to their validator page). */
function linkOf(ctx: NodeContext, l: Lookups, v: string): AddrView | null {
  if (ADDRESS.test(v)) {
    const validator = findValidator(ctx, v);
    return validator ? { value: v, label: validator.name, href: links.validator(v) } : addrView(v);
  }
  if (TOKEN.test(v)) return tokenLink(v, l.token(v));
  if (COLLECTION.test(v)) return collectionLink(v, l.collections.get(v) ?? null);
  return null;
}

/** A field's link: a token id of an NFT operation or event goes to the token's page. */
function fieldLink(ctx: NodeContext, l: Lookups, k: string, v: string, collection: unknown): AddrView | null {
  if (k === 'token_id' && typeof collection === 'string' && COLLECTION.test(collection) && /^\d+$/.test(v))
    return { value: v, label: `#${v}`, href: links.nft(collection, v) };
  return linkOf(ctx, l, v);
}

/** The NFT collections named by an operation's fields and its events, each read once. */
async function collectionsOf(ctx: NodeContext, s: TxSummary): Promise<Map<string, CollectionInfo | null>> {
  const named = [s.op?.fields.collection, ...s.events.map((e) => e.fields.collection)].filter(
    (c): c is string => typeof c === 'string' && COLLECTION.test(c),
  );
  const out = new Map<string, CollectionInfo | null>();
  for (const c of new Set(named)) out.set(c, await nftCollection(ctx, c));
  return out;
}

export interface OperationViews {
  op: { name: string; family: string; fields: FieldView[]; created: { k: string; link: AddrView } | null } | null;
  events: { type: string; fields: FieldView[] }[];
  /** SRC-20 balance movements (deploy, transfers, mints, burns) the transaction made. */
  tokenMoves: { kind: string; token: AddrView; from: AddrView; to: AddrView; amount: string }[];
}

/** The decoded operation of a native transaction, its events and its token movements. */
export async function operationViews(ctx: NodeContext, s: TxSummary): Promise<OperationViews> {
  const token = tokenLookup(ctx);
  const lookups: Lookups = { token, collections: await collectionsOf(ctx, s) };
  // A deploy names what it created only in its event.
  const deployed = s.events.find((e) => e.type === 'TokenDeploy')?.fields.contract;
  const deployedCollection = s.events.find((e) => e.type === 'CollectionDeployed')?.fields.collection;
  const fields = s.op?.fields ?? {};
  const opContract = typeof fields.contract === 'string' ? fields.contract : (deployed ?? null);
  const opToken = opContract ? token(opContract) : null;
  /** Decimals and symbol of a deploy not applied (failed or pending): from its own fields. */
  const units = (t: TokenRecord | null) =>
    t ?? (s.op?.name === 'Deploy' ? { decimals: Number(fields.decimals ?? 0), symbol: String(fields.symbol ?? '') } : null);
  const amountIn = (t: { decimals: number; symbol: string } | null, v: bigint) =>
    t ? tokenAmount(v, t.decimals, t.symbol) : v.toString();
  const opFields = Object.entries(fields).map(([k, v]): FieldView => {
    if (typeof v === 'string') return { k, v, link: fieldLink(ctx, lookups, k, v, fields.collection) };
    if (typeof v === 'bigint' && k === 'token_id')
      return { k, v: String(v), link: fieldLink(ctx, lookups, k, String(v), fields.collection) };
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
        return { k, v, link: fieldLink(ctx, lookups, k, v, e.fields.collection) };
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
          // What a deploy created is not one of its fields: named here (other operations link their own fields).
          created: deployed
            ? { k: 'Token', link: tokenLink(deployed, opToken) }
            : deployedCollection
              ? { k: 'Collection', link: collectionLink(deployedCollection, lookups.collections.get(deployedCollection) ?? null) }
              : null,
        }
      : null,
    events,
    tokenMoves,
  };
}
