/**
 * GET /explorer/address/{address}: balance, nonce, token holdings (SRC-20 from the state index, ERC-20
 * through the log index), contract code and verification; transactions or SRC-20 transfers (`?tab=`), paginated.
 */
import {
  type AccountTokenTransfer,
  accountCode,
  accountSrc20Tokens,
  accountTokenTransferCount,
  accountTokenTransfers,
  accountTokens,
  addressHistory,
  addressInfo,
  findValidator,
  getPendingNonce,
  getToken,
  nftAddressEventCount,
  nftAddressHistory,
  nftCollection,
  nftCollectionsOf,
  nftTokensOf,
} from '../../services/index.js';
import { summarizeTransactions } from '../read-model.js';
import { coins, int, short, tokenAmount } from '../format.js';
import { links } from '../links.js';
import { addressParam, pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView, transferRow, txRow } from '../rows.js';
import { verifiedContract } from '../verification.js';
import { type PageHandler, pager, tabPager, tabParam } from './common.js';
import { nftEventRow } from './nfts.js';

export const ADDRESS_TXS_PAGE = 25;
/** NFT collections listed in the holdings section (the rest through the NFTs tab). */
export const ADDRESS_COLLECTIONS = 25;
const TABS = ['transactions', 'token-transfers', 'nfts', 'nft-events'] as const;
type Tab = (typeof TABS)[number];

export const addressPage: PageHandler = async (ctx, req) => {
  const address = addressParam(req.params.address ?? '');
  const tab = tabParam(req.query, TABS, 'transactions');
  const p = pagingParams(req.query, ADDRESS_TXS_PAGE);
  const info = addressInfo(ctx, address);
  // The open tab's page; the other lists are read for their totals only.
  const at = (t: Tab) => (tab === t ? p : { page: 1, limit: 1, offset: 0 });
  // Feeds of closed tabs are only counted: reading even one event would decode its block's receipts.
  const none = { transfers: [], events: [], total: 0 };
  const [history, transfers, nfts, nftEvents, nftCollectionsHeld, src20, evmTokens, verified] = await Promise.all([
    addressHistory(ctx, address, at('transactions').offset, at('transactions').limit),
    tab === 'token-transfers'
      ? accountTokenTransfers(ctx, address, p.offset, p.limit)
      : { ...none, total: accountTokenTransferCount(ctx, address) },
    nftTokensOf(ctx, address, at('nfts').offset, at('nfts').limit),
    tab === 'nft-events'
      ? nftAddressHistory(ctx, address, p.offset, p.limit)
      : { ...none, total: nftAddressEventCount(ctx, address) },
    nftCollectionsOf(ctx, address, 0, ADDRESS_COLLECTIONS),
    accountSrc20Tokens(ctx, address),
    accountTokens(ctx, address),
    info.is_contract ? verifiedContract(ctx, address) : Promise.resolve(null),
  ]);
  const collectionNames = await collectionNamesOf(ctx, [
    ...nftCollectionsHeld.collections.map((c) => c.collection),
    ...nfts.tokens.map((t) => t.collection),
  ]);
  const summaries = tab === 'transactions' ? await summarizeTransactions(ctx, history.transactions) : [];
  const validator = findValidator(ctx, address);
  const code = info.is_contract ? accountCode(ctx, address) : null;
  const base = links.address(address);
  return html(
    renderPage(ctx, 'address', {
      title: `Address ${address}`,
      address,
      validator: validator ? { name: validator.name, href: links.validator(address) } : null,
      fields: [
        { k: 'Balance', v: coins(info.balance) },
        { k: 'Nonce', v: int(info.nonce) },
        { k: 'Next nonce (with pending)', v: int(getPendingNonce(ctx, address)) },
        { k: 'Transactions', v: int(info.tx_count) },
        { k: 'Type', v: info.is_contract ? 'contract' : 'account' },
        { k: 'NFTs held', v: `${int(nfts.total)} in ${int(nftCollectionsHeld.total)} collections` },
      ],
      nftHoldings: nftCollectionsHeld.collections.map((c) => ({
        collection: {
          value: c.collection,
          label: collectionNames.get(c.collection) ?? c.collection,
          href: links.collection(c.collection),
        },
        count: int(c.token_count),
      })),
      nftHoldingsMore: nftCollectionsHeld.total > nftCollectionsHeld.collections.length,
      tokens: [
        ...src20.map((t) => ({
          contract: { value: t.contract, label: t.name, href: links.token(t.contract) },
          symbol: t.symbol,
          balance: tokenAmount(t.balance, t.decimals, t.symbol),
          standard: 'SRC-20',
        })),
        ...evmTokens.tokens.map((t) => ({
          contract: addrView(t.contract, t.name ?? undefined),
          symbol: t.symbol ?? '',
          balance: t.decimals === null ? t.balance : tokenAmount(BigInt(t.balance), t.decimals, t.symbol ?? ''),
          standard: 'ERC-20 (EVM)',
        })),
      ],
      code: code === null ? null : { bytes: int((code.length - 2) / 2), hex: code },
      verified: verified
        ? {
            status: verified.status,
            name: verified.name,
            compiler: verified.compiler,
            files: verified.files,
          }
        : null,
      tab,
      tabLinks: {
        transactions: base,
        transfers: `${base}?tab=token-transfers`,
        nfts: `${base}?tab=nfts`,
        nftEvents: `${base}?tab=nft-events`,
      },
      txTotal: int(history.total),
      transferTotal: int(transfers.total),
      nftTotal: int(nfts.total),
      nftEventTotal: int(nftEvents.total),
      nfts:
        tab === 'nfts'
          ? nfts.tokens.map((t) => ({
              collection: {
                value: t.collection,
                label: collectionNames.get(t.collection) ?? t.collection,
                href: links.collection(t.collection),
              },
              href: links.nft(t.collection, t.token_id),
              id: `#${t.token_id}`,
              // Text, never a link: the URI is whatever the minter or deployer wrote.
              uri: t.token_uri ?? '',
            }))
          : [],
      nftEvents: tab === 'nft-events' ? nftEvents.events.map(nftEventRow) : [],
      txs: tab === 'transactions' ? history.transactions.map((t, i) => txRow(t, summaries[i])) : [],
      transfers: tab === 'token-transfers' ? transfers.transfers.map((x) => transferView(ctx, x, address)) : [],
      pager:
        tab === 'transactions'
          ? pager(base, p, ADDRESS_TXS_PAGE, history.total)
          : tabPager(base, tab, p, ADDRESS_TXS_PAGE, { 'token-transfers': transfers, nfts, 'nft-events': nftEvents }[tab].total),
    }),
  );
};

/** A token transfer row of an address: the token, the direction, the other side and the amount in the token's units. */
function transferView(ctx: Parameters<PageHandler>[0], x: AccountTokenTransfer, address: string) {
  const t = getToken(ctx, x.contract);
  return {
    ...transferRow(x, t ? tokenAmount(x.amount, t.decimals, t.symbol) : String(x.amount)),
    direction: x.to === address && x.from !== address ? 'in' : x.from === address && x.to !== address ? 'out' : 'self',
    token: { value: x.contract, label: t ? t.symbol : short(x.contract, 10), href: links.token(x.contract) },
  };
}

/** Names of NFT collections ("Name (SYMBOL)"), each read once. */
async function collectionNamesOf(ctx: Parameters<PageHandler>[0], addresses: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const a of new Set(addresses)) {
    const c = await nftCollection(ctx, a);
    if (c) names.set(a, `${c.name} (${c.symbol})`);
  }
  return names;
}
