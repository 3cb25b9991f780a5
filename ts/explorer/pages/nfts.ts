/**
 * SRC-721 pages: GET /explorer/nfts (collections), /explorer/nfts/{collection} (alias /explorer/nft/{collection})
 * and /explorer/nfts/{collection}/{token_id} (alias /explorer/nft/{collection}/{token_id}), from the NFT
 * services (state records, the NFT index, the native event index). URIs (base_uri, token URIs, overrides) are
 * whatever a deployer or minter wrote (`javascript:`, `data:`, markup): they are shown as text, never linked.
 */
import {
  type CollectionInfo,
  type NftEventEntry,
  collectionParam,
  nftCollection,
  nftCollectionEventCount,
  nftCollectionEvents,
  nftCollectionHolders,
  nftCollectionTokens,
  nftCollections,
  nftToken,
  nftTokenHistory,
  tokenIdParam,
} from '../../services/index.js';
import { NotFoundError } from '../../util/index.js';
import { shareChart } from '../charts.js';
import { int, percent, short } from '../format.js';
import { links } from '../links.js';
import { pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { type AddrView, addrView } from '../rows.js';
import { type PageHandler, pager, tabPager, tabParam } from './common.js';

export const NFT_PAGE = 25;
/** Holders drawn in a collection's distribution chart (the rest is one "others" segment). */
export const CHART_HOLDERS = 10;

export const collectionsPage: PageHandler = async (ctx, req) => {
  const p = pagingParams(req.query, NFT_PAGE);
  const list = await nftCollections(ctx, p.offset, p.limit);
  return html(
    renderPage(ctx, 'nftCollections', {
      title: 'NFT collections',
      total: int(list.total),
      rows: list.collections.map((c) => ({
        href: links.collection(c.address),
        name: c.name,
        symbol: c.symbol,
        address: c.address,
        addressShort: short(c.address, 12),
        supply: int(c.total_supply),
        holders: int(c.holders ?? 0),
        created: { href: links.block(c.created_height), text: int(c.created_height) },
      })),
      pager: pager(links.nfts, p, NFT_PAGE, list.total),
    }),
  );
};

/** A block height linked to its page, as a field link. */
const heightLink = (h: number): AddrView => ({ value: int(h), label: int(h), href: links.block(h) });

/** An event feed row: its type, where it was recorded, and every field (addresses and token ids linked, URIs as text). */
export function nftEventRow(e: NftEventEntry) {
  const collection = String(e.collection);
  const fields: { k: string; v: string; link: AddrView | null }[] = [];
  for (const [k, raw] of Object.entries(e)) {
    if (k === 'type' || k === 'txid' || k === 'block_index' || k === 'tx_index' || k === 'collection') continue;
    const v = String(raw);
    if (k === 'token_id' && /^\d+$/.test(v))
      fields.push({ k, v, link: { value: v, label: `#${v}`, href: links.nft(collection, v) } });
    else fields.push({ k, v, link: /^0x[0-9a-f]{40}$/.test(v) ? addrView(v) : null });
  }
  return {
    type: e.type,
    tx: { href: links.tx(e.txid), text: short(e.txid, 10), txid: e.txid },
    block: { href: links.block(e.block_index), text: int(e.block_index) },
    collection: { value: collection, label: short(collection, 10), href: links.collection(collection) },
    fields,
  };
}

function collectionFields(c: CollectionInfo) {
  return [
    { k: 'Name', v: c.name, link: null },
    { k: 'Symbol', v: c.symbol, link: null },
    { k: 'Collection', v: c.address, link: null },
    { k: 'Tokens in existence', v: int(c.total_supply), link: null },
    { k: 'Minted', v: int(c.total_minted), link: null },
    { k: 'Burned', v: int(c.total_burned), link: null },
    { k: 'Maximum supply', v: c.max_supply === 0n ? 'unlimited' : int(c.max_supply), link: null },
    { k: 'Holders', v: int(c.holders ?? 0), link: null },
    { k: 'Deployer', v: c.deployer, link: addrView(c.deployer) },
    { k: 'Royalty', v: `${percent(c.royalty_bps / 100)} (${c.royalty_bps} bps)`, link: null },
    { k: 'Royalty recipient', v: c.royalty_recipient, link: addrView(c.royalty_recipient) },
    // Text, never a link: a base URI is whatever the deployer wrote.
    { k: 'Base URI', v: c.base_uri === '' ? '(none)' : c.base_uri, link: null },
    { k: 'Frozen', v: c.frozen ? 'yes (no more mints, base URI fixed)' : 'no', link: null },
    { k: 'Created at block', v: int(c.created_height), link: heightLink(c.created_height) },
  ];
}

const TABS = ['tokens', 'holders', 'events'] as const;

export const collectionPage: PageHandler = async (ctx, req) => {
  const collection = collectionParam(req.params.collection ?? '');
  const tab = tabParam(req.query, TABS, '');
  const p = pagingParams(req.query, NFT_PAGE);
  const c = await nftCollection(ctx, collection);
  if (!c) throw new NotFoundError('no NFT collection at this address');
  const at = (name: string) => (tab === name ? p : { page: 1, limit: NFT_PAGE, offset: 0 });
  const shown = (name: string) => tab === '' || tab === name;
  const [top, tokens, holders, events] = await Promise.all([
    nftCollectionHolders(ctx, collection, 0, CHART_HOLDERS),
    shown('tokens') ? nftCollectionTokens(ctx, collection, at('tokens').offset, at('tokens').limit) : null,
    shown('holders') ? nftCollectionHolders(ctx, collection, at('holders').offset, at('holders').limit) : null,
    shown('events') ? nftCollectionEvents(ctx, collection, at('events').offset, at('events').limit) : null,
  ]);
  const supply = Number(c.total_supply);
  const share = (n: number) => (supply > 0 ? (n / supply) * 100 : 0);
  const totals = {
    tokens: Number(c.total_supply),
    holders: top.total,
    events: events?.total ?? nftCollectionEventCount(ctx, collection),
  };
  const base = links.collection(collection);
  return html(
    renderPage(ctx, 'nftCollection', {
      title: `${c.name} (${c.symbol})`,
      fields: collectionFields(c),
      chart: shareChart(
        `Holder distribution (largest ${CHART_HOLDERS} holders by tokens held, and everyone else)`,
        top.holders.map((h) => ({ label: short(h.address, 6), pct: share(h.token_count) })),
      ),
      tokens: (tokens?.tokens ?? []).map((t) => ({
        href: links.nft(collection, t.token_id),
        id: `#${t.token_id}`,
        owner: addrView(t.owner),
        uri: t.token_uri ?? '',
        minted: { href: links.block(t.minted_height), text: int(t.minted_height) },
      })),
      holders: (holders?.holders ?? []).map((h, i) => ({
        rank: int(at('holders').offset + i + 1),
        who: addrView(h.address),
        count: int(h.token_count),
        share: percent(share(h.token_count)),
      })),
      events: (events?.events ?? []).map(nftEventRow),
      totals: { tokens: int(totals.tokens), holders: int(totals.holders), events: int(totals.events) },
      tab,
      tabLinks: { tokens: `${base}?tab=tokens`, holders: `${base}?tab=holders`, events: `${base}?tab=events` },
      tabPager: tab === '' ? null : tabPager(base, tab, p, NFT_PAGE, totals[tab]),
    }),
  );
};

export const nftTokenPage: PageHandler = async (ctx, req) => {
  const collection = collectionParam(req.params.collection ?? '');
  const id = tokenIdParam(req.params.id ?? '');
  const p = pagingParams(req.query, NFT_PAGE);
  const c = await nftCollection(ctx, collection);
  if (!c) throw new NotFoundError('no NFT collection at this address');
  // A burned token keeps its history; a token never minted is a 404 (the history query says so).
  const [t, history] = await Promise.all([
    nftToken(ctx, collection, id),
    nftTokenHistory(ctx, collection, id, p.offset, p.limit),
  ]);
  return html(
    renderPage(ctx, 'nftToken', {
      title: `${c.name} #${id}`,
      collection: { href: links.collection(collection), name: c.name, symbol: c.symbol, address: collection },
      id: String(id),
      burned: t === null,
      fields: t
        ? [
            { k: 'Owner', v: t.owner, link: addrView(t.owner) },
            // Text, never a link (see the file comment).
            { k: 'Token URI', v: t.token_uri ?? '(none)', link: null },
            { k: 'URI override', v: t.token_uri_override ?? '(none: base URI + id)', link: null },
            { k: 'Minted at block', v: int(t.minted_height), link: heightLink(t.minted_height) },
            { k: 'Last transfer at block', v: int(t.last_transfer_height), link: heightLink(t.last_transfer_height) },
            {
              k: 'Approved spender',
              v: t.approval
                ? `${t.approval.spender}${t.approval.expiry_height === 0n ? '' : ` until block ${int(t.approval.expiry_height)}`}`
                : 'none',
              link: t.approval ? addrView(t.approval.spender) : null,
            },
          ]
        : [],
      events: history.events.map(nftEventRow),
      total: int(history.total),
      pager: pager(links.nft(collection, id), p, NFT_PAGE, history.total),
    }),
  );
};
