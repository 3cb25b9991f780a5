/** GET /explorer/richlist: the largest balances and their share of the circulating supply. */
import { MAX_RICHLIST, richList } from '../../services/index.js';
import { coins, int, percent } from '../format.js';
import { links } from '../links.js';
import { pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView } from '../rows.js';
import { type PageHandler, pager } from './common.js';

export const RICHLIST_PAGE = 50;

interface RichHolder {
  rank: number;
  address: string;
  balance: bigint;
  percentage: number;
}

export const richlistPage: PageHandler = async (ctx, req) => {
  const p = pagingParams(req.query, RICHLIST_PAGE, MAX_RICHLIST);
  const list = (await richList(ctx, MAX_RICHLIST)) as {
    holders: RichHolder[];
    total_accounts: number;
    circulating_supply: bigint;
  };
  return html(
    renderPage(ctx, 'richlist', {
      title: 'Rich list',
      accounts: int(list.total_accounts),
      circulating: coins(list.circulating_supply),
      rows: list.holders.slice(p.offset, p.offset + p.limit).map((h) => ({
        rank: int(h.rank),
        who: addrView(h.address),
        balance: coins(h.balance),
        share: percent(h.percentage),
      })),
      pager: pager(links.richlist, p, RICHLIST_PAGE, list.holders.length),
      max: int(MAX_RICHLIST),
    }),
  );
};
