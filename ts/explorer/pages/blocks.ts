/** GET /explorer/blocks (newest first, paginated) and GET /explorer/block/{height or hash}. */
import { type TxView, blocksPage, confirmedTxView, getBlock } from '../../services/index.js';
import { blockHeightOfHash, chainSummary, commitCertificate, finalityView, summarizeTransactions } from '../read-model.js';
import { NotFoundError } from '../../util/index.js';
import { gas, int, time } from '../format.js';
import { links } from '../links.js';
import { hashParam, heightParam, pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html, redirect } from '../response.js';
import { blockRow, proposerView, txRow } from '../rows.js';
import { type PageHandler, pager, validatorNames } from './common.js';

export const BLOCKS_PAGE = 25;
/** Transactions per page of a block. */
export const BLOCK_TXS_PAGE = 50;

export const blocksListPage: PageHandler = async (ctx, req) => {
  const p = pagingParams(req.query, BLOCKS_PAGE);
  const head = chainSummary(ctx).height;
  const [names, blocks] = await Promise.all([validatorNames(ctx), blocksPage(ctx, p.offset, p.limit)]);
  return html(
    renderPage(ctx, 'blocks', {
      title: p.page > 1 ? `Blocks, page ${p.page}` : 'Blocks',
      blocks: blocks.map((b) => blockRow(b, names)),
      pager: pager(links.blocks, p, BLOCKS_PAGE, head + 1),
      total: int(head + 1),
    }),
  );
};

export const blockPage: PageHandler = async (ctx, req) => {
  const id = req.params.id ?? '';
  if (!/^\d+$/.test(id)) {
    // A block hash is accepted too; the canonical address of a block is its height.
    const height = await blockHeightOfHash(ctx, hashParam(id, 'block height or block hash'));
    if (height === null) throw new NotFoundError('no block with this hash');
    return redirect(links.block(height));
  }
  const height = heightParam(id);
  const b = await getBlock(ctx, height).catch(() => {
    throw new NotFoundError(`no block at height ${int(height)} yet (the head is ${int(chainSummary(ctx).height)})`);
  });
  const p = pagingParams(req.query, BLOCK_TXS_PAGE);
  const views: TxView[] = [];
  for (let i = p.offset; i < Math.min(b.transactions.length, p.offset + p.limit); i++) views.push(confirmedTxView(ctx, b, i));
  const [names, summaries] = await Promise.all([validatorNames(ctx), summarizeTransactions(ctx, views)]);
  const fin = finalityView(ctx);
  const cert = commitCertificate(b);
  const t = time(b.timestamp);
  return html(
    renderPage(ctx, 'block', {
      title: `Block ${int(b.index)}`,
      heading: `Block ${int(b.index)}`,
      prev: b.index > 0 ? links.block(b.index - 1) : null,
      next: b.index < fin.head ? links.block(b.index + 1) : null,
      fields: [
        { k: 'Height', v: int(b.index) },
        { k: 'Hash', v: b.hash, mono: true },
        { k: 'Previous hash', v: b.previous_hash, mono: true, href: b.index > 0 ? links.block(b.index - 1) : null },
        { k: 'Time', v: `${t.abs} (${t.rel})` },
        {
          k: 'Status',
          v:
            b.index <= fin.finalized
              ? `finalized (${int(fin.head - b.index + 1)} confirmations)`
              : `not final yet (${int(fin.head - b.index + 1)} confirmations)`,
        },
        { k: 'Consensus', v: b.consensus },
        { k: 'Header version', v: String(b.version) },
        { k: 'Round', v: String(b.round) },
        { k: 'Transactions', v: int(b.tx_count) },
        { k: 'Gas used', v: gas(b.gas_used) },
        { k: 'Transactions root', v: b.merkle_root, mono: true },
        { k: 'State root', v: b.state_root, mono: true },
        { k: 'Receipts root', v: b.receipts_root || '(none: version 0 header)', mono: true },
        { k: 'Proposer signature', v: b.signature || '(none: genesis)', mono: true },
      ],
      proposer: b.index === 0 ? null : proposerView(b.validator, names),
      bloom: b.logs_bloom,
      bloomEmpty: /^0*$/.test(b.logs_bloom),
      justification:
        cert === null
          ? null
          : cert === 'malformed'
            ? { malformed: true, round: '', signers: [] }
            : { malformed: false, round: String(cert.round), signers: cert.signers.map((s) => proposerView(s, names)) },
      justificationBytes: b.justification.length,
      blockConsensus: b.consensus,
      txs: views.map((v, i) => txRow(v, summaries[i])),
      pager: pager(links.block(b.index), p, BLOCK_TXS_PAGE, b.transactions.length),
    }),
  );
};
