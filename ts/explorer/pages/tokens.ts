/** GET /explorer/tokens and GET /explorer/tokens/{contract} (alias /explorer/token/{contract}). */
import {
  type TokenRecord,
  getToken,
  isTokenContract,
  listTokens,
  normContract,
  tokenHolders,
  tokenTransferCount,
  tokenTransfers,
} from '../../services/index.js';
import { InvalidParamsError, NotFoundError } from '../../util/index.js';
import { shareChart } from '../charts.js';
import { int, percent, short, tokenAmount } from '../format.js';
import { links } from '../links.js';
import { pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView, transferRow } from '../rows.js';
import { type PageHandler, pager, tabPager, tabParam } from './common.js';

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
  const tab = tabParam(req.query, ['holders', 'transfers'], '');
  const p = pagingParams(req.query, TOKENS_PAGE);
  const first = { page: 1, limit: TOKENS_PAGE, offset: 0 };
  const holdersPage = tab === 'holders' ? p : first;
  const transfersPage = tab === 'transfers' ? p : first;
  // Pages of the ranked holder index and of the token's event feed: the cost does not grow with holders.
  const [top, holders, transfers] = await Promise.all([
    tokenHolders(ctx, contract, 0, CHART_HOLDERS),
    tab === 'transfers' ? null : tokenHolders(ctx, contract, holdersPage.offset, holdersPage.limit),
    tab === 'holders' ? null : tokenTransfers(ctx, contract, transfersPage.offset, transfersPage.limit),
  ]);
  const holdersTotal = top.total;
  const transfersTotal = transfers?.total ?? tokenTransferCount(ctx, contract);
  const amount = (units: bigint) => tokenAmount(units, t.decimals, t.symbol);
  const base = links.token(contract);
  return html(
    renderPage(ctx, 'token', {
      title: `${t.name} (${t.symbol})`,
      token: tokenFields(t),
      contract,
      chart: shareChart(
        `Holder distribution (largest ${CHART_HOLDERS} holders and everyone else)`,
        top.holders.map((h) => ({ label: short(h.address, 6), pct: h.percentage })),
      ),
      holders: (holders?.holders ?? []).map((h, i) => ({
        rank: int(holdersPage.offset + i + 1),
        who: addrView(h.address),
        balance: amount(h.balance),
        share: percent(h.percentage),
      })),
      holdersTotal: int(holdersTotal),
      transfers: (transfers?.transfers ?? []).map((x) => transferRow(x, amount(x.amount))),
      transfersTotal: int(transfersTotal),
      tabLinks: { holders: `${base}?tab=holders`, transfers: `${base}?tab=transfers` },
      tab,
      tabPager: tab === '' ? null : tabPager(base, tab, p, TOKENS_PAGE, tab === 'holders' ? holdersTotal : transfersTotal),
    }),
  );
};

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
    {
      k: 'Deployed at block',
      v: int(t.deployed_at_height),
      link: { value: String(t.deployed_at_height), label: int(t.deployed_at_height), href: links.block(t.deployed_at_height) },
    },
  ];
}
