/** GET /explorer/tokens and GET /explorer/tokens/{contract} (alias /explorer/token/{contract}). */
import {
  type TokenRecord,
  getToken,
  isTokenContract,
  listTokens,
  normContract,
  tokenHolders,
  tokenTransfers,
} from '../../services/index.js';
import { InvalidParamsError, NotFoundError } from '../../util/errors.js';
import { shareChart } from '../charts.js';
import { int, percent, short, time, tokenAmount } from '../format.js';
import { links } from '../links.js';
import { pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView } from '../rows.js';
import { type PageHandler, pager } from './common.js';

export const TOKENS_PAGE = 25;
/** Holders drawn in the distribution chart (the rest is one "others" segment). */
export const CHART_HOLDERS = 10;

export const tokensPage: PageHandler = async (ctx, req) => {
  const p = pagingParams(req.query, TOKENS_PAGE);
  const all = await listTokens(ctx);
  return html(
    renderPage(ctx, 'tokens', {
      title: 'Tokens',
      total: int(all.total),
      rows: all.tokens.slice(p.offset, p.offset + p.limit).map((t) => ({
        href: links.token(t.contract),
        name: t.name,
        symbol: t.symbol,
        contract: t.contract,
        contractShort: short(t.contract, 12),
        supply: tokenAmount(t.supply, t.decimals, t.symbol),
        holders: int(t.holders),
        deployed: { href: links.block(t.deployed_at_height), text: int(t.deployed_at_height) },
      })),
      pager: pager(links.tokens, p, TOKENS_PAGE, all.total),
    }),
  );
};

/** Canonical SRC20_ contract of a path parameter (400 when malformed). */
export function contractParam(raw: string): string {
  if (!isTokenContract(raw)) throw new InvalidParamsError('a token contract is SRC20_ followed by 40 hexadecimal characters');
  return normContract(raw);
}

export const tokenPage: PageHandler = async (ctx, req) => {
  const contract = contractParam(req.params.contract ?? '');
  const t = getToken(ctx, contract);
  if (!t) throw new NotFoundError('no token with this contract');
  const tab = req.query.get('tab') ?? '';
  if (tab !== '' && tab !== 'holders' && tab !== 'transfers') throw new InvalidParamsError('tab is holders or transfers');
  const p = pagingParams(req.query, TOKENS_PAGE);
  const holdersPage = tab === 'holders' ? p : { page: 1, limit: TOKENS_PAGE, offset: 0 };
  const transfersPage = tab === 'transfers' ? p : { page: 1, limit: TOKENS_PAGE, offset: 0 };
  const holders = await tokenHolders(ctx, contract);
  const transfers = await tokenTransfers(ctx, contract, transfersPage.offset, transfersPage.limit);
  const amount = (units: bigint) => tokenAmount(units, t.decimals, t.symbol);
  const base = links.token(contract);
  return html(
    renderPage(ctx, 'token', {
      title: `${t.name} (${t.symbol})`,
      token: tokenFields(t),
      contract,
      chart: shareChart(
        `Holder distribution (largest ${CHART_HOLDERS} holders and everyone else)`,
        holders.holders.slice(0, CHART_HOLDERS).map((h) => ({ label: short(h.address, 6), pct: h.percentage })),
      ),
      holders: holders.holders.slice(holdersPage.offset, holdersPage.offset + holdersPage.limit).map((h, i) => ({
        rank: int(holdersPage.offset + i + 1),
        who: addrView(h.address),
        balance: amount(h.balance),
        share: percent(h.percentage),
      })),
      holdersTotal: int(holders.total),
      transfers: transfers.transfers.map((x) => ({
        href: links.tx(x.txid),
        txShort: short(x.txid, 10),
        txid: x.txid,
        block: { href: links.block(x.block_index), text: int(x.block_index) },
        time: time(x.timestamp),
        kind: x.kind,
        from: addrView(x.from),
        to: addrView(x.to),
        amount: amount(x.amount),
      })),
      transfersTotal: int(transfers.total),
      tabLinks: { holders: `${base}?tab=holders`, transfers: `${base}?tab=transfers` },
      tab,
      tabPager: tab === '' ? null : tabPager(base, tab, p, tab === 'holders' ? holders.total : transfers.total),
    }),
  );
};

function tabPager(base: string, tab: string, p: ReturnType<typeof pagingParams>, total: number) {
  const v = pager(base, p, TOKENS_PAGE, total);
  const withTab = (href: string | null) => (href === null ? null : href.replace('?', `?tab=${tab}&`));
  return { ...v, prev: withTab(v.prev), next: withTab(v.next) };
}

function tokenFields(t: TokenRecord): { k: string; v: string; link?: ReturnType<typeof addrView> }[] {
  return [
    { k: 'Name', v: t.name },
    { k: 'Symbol', v: t.symbol },
    { k: 'Contract', v: t.contract },
    { k: 'Decimals', v: String(t.decimals) },
    { k: 'Total supply', v: tokenAmount(t.supply, t.decimals, t.symbol) },
    { k: 'Maximum supply', v: t.max_supply === 0n ? 'no cap' : tokenAmount(t.max_supply, t.decimals, t.symbol) },
    { k: 'Holders', v: int(t.holders) },
    { k: 'Owner', v: t.owner, link: addrView(t.owner) },
    { k: 'Deployed at block', v: int(t.deployed_at_height) },
  ];
}
