/** GET /explorer: the chain at a glance. */
import {
  blocksPage,
  chainPerformance,
  currentEpoch,
  deployedTokenCount,
  nftCollections,
  recentTransactions,
  supplyBase,
} from '../../services/index.js';
import { chainSummary, dailyActivity, finalityView, summarizeTransactions, validatorsOnline } from '../read-model.js';
import { barChart } from '../charts.js';
import { coins, int, percent } from '../format.js';
import { links } from '../links.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { blockRow, txRow } from '../rows.js';
import { type PageHandler, validatorNames } from './common.js';

/** Latest blocks and transactions on the home page. */
export const HOME_LIST = 10;

const dayLabel = (dayStart: number): string => new Date(dayStart * 1000).toISOString().slice(5, 10);

export const homePage: PageHandler = async (ctx) => {
  const [names, perf, supply, activity, recent, blocks, tokens, collections] = await Promise.all([
    validatorNames(ctx),
    chainPerformance(ctx),
    supplyBase(ctx),
    dailyActivity(ctx),
    recentTransactions(ctx, 0, HOME_LIST),
    blocksPage(ctx, 0, HOME_LIST),
    deployedTokenCount(ctx),
    nftCollections(ctx, 0, 0),
  ]);
  const summaries = await summarizeTransactions(ctx, recent.transactions);
  const fin = finalityView(ctx);
  const online = validatorsOnline(ctx);
  const epoch = currentEpoch(ctx) as { epoch_number: number; progress: number };
  const day = (pick: 'blocks' | 'txs') =>
    activity.days.map((d) => ({
      label: dayLabel(d.dayStart),
      value: d[pick],
      title: `${dayLabel(d.dayStart)}: ${int(d[pick])} ${pick === 'txs' ? 'transactions' : 'blocks'}`,
    }));
  return html(
    renderPage(ctx, 'home', {
      title: 'Overview',
      stats: [
        { label: 'Head height', value: int(fin.head), href: links.block(fin.head) },
        { label: 'Finalized height', value: int(fin.finalized), href: links.block(fin.finalized) },
        { label: 'Transactions per second (1 h)', value: String(perf.tps_1h), href: links.transactions },
        { label: 'Average block time', value: `${int(perf.avg_block_time_ms)} ms`, href: links.blocks },
        { label: 'Circulating supply', value: coins(supply.circulating), href: links.richlist },
        { label: 'Burned', value: coins(supply.burned), href: null },
        { label: 'Validators online', value: `${online.online} of ${online.active}`, href: links.validators },
        { label: 'Epoch', value: `${int(epoch.epoch_number)} (${percent(epoch.progress * 100)} done)`, href: links.validators },
        { label: 'Mempool', value: `${int(chainSummary(ctx).mempoolSize)} pending`, href: links.mempool },
        { label: 'SRC-20 tokens', value: int(tokens), href: links.tokens },
        { label: 'NFT collections', value: int(collections.total), href: links.nfts },
      ],
      blocks: blocks.map((b) => blockRow(b, names)),
      txs: recent.transactions.map((t, i) => txRow(t, summaries[i])),
      blocksChart: barChart('Blocks per day (UTC, last 14 days)', day('blocks')),
      txsChart: barChart('Transactions per day (UTC, last 14 days)', day('txs')),
      chartsComplete: activity.complete,
    }),
  );
};
