/**
 * SRC-721 events (spec: one per operation, with the spec's fields) and the index terms the REST feeds
 * read: a collection's mints, transfers and burns; a token's history (those and its approvals); every
 * NFT event an address takes part in.
 */
import type { NativeEvent } from '../kit/events.js';
import { COLLECTION_PREFIX } from './keys.js';

/** Event names of the module (unique across modules; the spec's names). */
export const NFT_EVENTS = {
  collectionDeployed: 'CollectionDeployed',
  minted: 'Minted',
  transferred: 'Transferred',
  burned: 'Burned',
  approved: 'Approved',
  operatorApprovalChanged: 'OperatorApprovalChanged',
  collectionFrozen: 'CollectionFrozen',
  baseUriUpdated: 'BaseUriUpdated',
} as const;
export type NftEventType = (typeof NFT_EVENTS)[keyof typeof NFT_EVENTS];

const NFT_EVENT_SET: ReadonlySet<string> = new Set(Object.values(NFT_EVENTS));

/** The events a collection's feed lists (spec: mint, transfer and burn events). */
export const COLLECTION_FEED_EVENTS: ReadonlySet<string> = new Set([
  NFT_EVENTS.minted,
  NFT_EVENTS.transferred,
  NFT_EVENTS.burned,
]);

/** Event fields by type, in the spec's order (every value a string: ids and heights decimal). */
export const nftEvent = (type: NftEventType, fields: Record<string, string>): NativeEvent => ({ type, fields });

export const collectionTerm = (collection: string): string => `nft:collection:${collection}`;
export const tokenTerm = (collection: string, id: bigint | string): string => `nft:token:${collection}:${id}`;
export const addressTerm = (address: string): string => `nft:addr:${address}`;

/** The parties of an event: every field naming an address. */
const PARTY_FIELDS = ['deployer', 'minter', 'from', 'to', 'owner', 'spender', 'operator'] as const;

/**
 * Index terms of an NFT event; [] for any other family's event (recognised by its type and the
 * `SRC721_` collection field, so an event name another family also uses is never mixed in).
 */
export function nftIndexTerms(e: NativeEvent): string[] {
  const c = e.fields.collection;
  if (!NFT_EVENT_SET.has(e.type) || typeof c !== 'string' || !c.startsWith(COLLECTION_PREFIX)) return [];
  const terms: string[] = [];
  if (COLLECTION_FEED_EVENTS.has(e.type)) terms.push(collectionTerm(c));
  if (e.fields.token_id !== undefined) terms.push(tokenTerm(c, e.fields.token_id));
  for (const f of PARTY_FIELDS) {
    const a = e.fields[f];
    if (a?.startsWith('0x')) terms.push(addressTerm(a));
  }
  return terms;
}
