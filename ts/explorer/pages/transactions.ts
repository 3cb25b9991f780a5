/** GET /explorer/transactions (recent, paginated), GET /explorer/tx/{txid} and GET /explorer/mempool. */
import { decodeCall, getBlock, getTransaction, mempoolView, type TxView } from '../../services/index.js';
import { type CallFrame, callTree, finalityView, summarizeTransactions, confirmedTransactionsPage } from '../read-model.js';
import { NotFoundError } from '../../util/index.js';
import { coins, coinsWei, gas, int, time } from '../format.js';
import { links } from '../links.js';
import { hashParam, pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { type AddrView, addrView, kindLabel, proposerView, txRow } from '../rows.js';
import { type PageHandler, pager, validatorNames } from './common.js';
import { decodedLogs } from './logs.js';
import { operationViews } from './operations.js';
import { verificationLookup } from '../verification.js';

export const TXS_PAGE = 25;
/** Calls of a call tree shown (a deep or wide tree is cut, with a note). */
export const MAX_CALL_FRAMES = 200;
/** Seconds after which a page whose call tree is still being traced reloads itself (meta refresh). */
export const TRACE_REFRESH_SECONDS = 2;

export const transactionsPage: PageHandler = async (ctx, req) => {
  const p = pagingParams(req.query, TXS_PAGE);
  const recent = await confirmedTransactionsPage(ctx, p.offset, p.limit);
  const summaries = await summarizeTransactions(ctx, recent.transactions);
  return html(
    renderPage(ctx, 'transactions', {
      title: p.page > 1 ? `Transactions, page ${p.page}` : 'Transactions',
      txs: recent.transactions.map((t, i) => txRow(t, summaries[i])),
      pager: pager(links.transactions, p, TXS_PAGE, null, recent.hasMore),
      scannedFrom: int(recent.scannedFromHeight),
      scannedFromHref: links.block(recent.scannedFromHeight),
    }),
  );
};

export const mempoolPage: PageHandler = async (ctx, req) => {
  const p = pagingParams(req.query, TXS_PAGE);
  const pool = mempoolView(ctx, p.offset + p.limit);
  const views: TxView[] = pool.transactions.slice(p.offset).map((tx) => ({
    ...tx,
    status: 'pending_in_mempool',
    block_index: null,
    block_hash: null,
    block_timestamp: null,
    tx_index: null,
    confirmations: 0,
  }));
  const summaries = await summarizeTransactions(ctx, views);
  return html(
    renderPage(ctx, 'mempool', {
      title: 'Mempool',
      size: int(pool.size),
      txs: views.map((t, i) => ({ ...txRow(t, summaries[i]), signed: time(t.timestamp), nonce: String(t.nonce) })),
      pager: pager(links.mempool, p, TXS_PAGE, pool.size),
    }),
  );
};

interface CallRow {
  depth: number;
  type: string;
  from: AddrView;
  to: AddrView;
  value: string;
  gasUsed: string;
  input: string;
  inputFull: string;
  /** The called function, when the target contract is verified. */
  fn: string | null;
  error: string | null;
}

/** The call tree flattened depth-first (rows indented by depth), at most MAX_CALL_FRAMES rows. */
function callRows(root: CallFrame): { rows: CallRow[]; cut: boolean } {
  const rows: CallRow[] = [];
  let cut = false;
  const walk = (f: CallFrame, depth: number): void => {
    if (rows.length >= MAX_CALL_FRAMES) {
      cut = true;
      return;
    }
    const input = f.input ?? '0x';
    rows.push({
      depth: Math.min(depth, 12),
      type: f.type,
      from: addrView(f.from),
      to: addrView(f.to ?? null),
      value: f.value ? coinsWei(BigInt(f.value)) : coinsWei(0n),
      gasUsed: f.gasUsed ? gas(BigInt(f.gasUsed)) : '',
      input: input.length > 10 ? `${input.slice(0, 10)}… (${int((input.length - 2) / 2)} bytes)` : input,
      inputFull: input,
      fn: null,
      error: f.error ? (f.revertReason ? `${f.error}: ${f.revertReason}` : f.error) : null,
    });
    for (const c of f.calls ?? []) walk(c, depth + 1);
  };
  walk(root, 0);
  return { rows, cut };
}

export const txPage: PageHandler = async (ctx, req) => {
  const txid = hashParam(req.params.txid ?? '');
  const v = await getTransaction(ctx, txid);
  if (!v) throw new NotFoundError('no transaction with this id in the chain or the mempool');
  const [[s], names] = await Promise.all([summarizeTransactions(ctx, [v]), validatorNames(ctx)]);
  const fin = finalityView(ctx);
  const block = v.block_index === null ? null : await getBlock(ctx, v.block_index);
  const evm = s.kind === 'evm';
  const trace = evm && v.block_index !== null ? await callTree(ctx, v.block_index, v.txid) : null;
  const calls = trace && 'tree' in trace ? callRows(trace.tree) : null;
  const proposer = block ? proposerView(block.validator, names) : null;
  const verified = verificationLookup(ctx);
  /** The function an EVM call invokes, decoded with the ABI of its verified target. */
  const decodedCall = async (to: string, input: string) => {
    const v = await verified(to);
    return v ? { decoded: await decodeCall(v.abi, input), contract: v.name } : null;
  };
  if (calls) {
    for (const row of calls.rows) {
      const v = row.to.href ? await verified(row.to.value) : null;
      row.fn = v ? ((await decodeCall(v.abi, row.inputFull))?.signature ?? null) : null;
    }
  }
  return html(
    renderPage(ctx, 'tx', {
      title: `Transaction ${v.txid.slice(0, 12)}…`,
      txid: v.txid,
      status: s.status,
      kind: kindLabel(s),
      row: txRow(v, s),
      block:
        v.block_index === null
          ? null
          : { href: links.block(v.block_index), height: int(v.block_index), index: String(v.tx_index) },
      time: v.block_timestamp === null ? null : time(v.block_timestamp),
      finality:
        v.block_index === null
          ? 'pending in the mempool'
          : v.block_index <= fin.finalized
            ? `finalized (${int(v.confirmations)} confirmations)`
            : `included, not final yet (${int(v.confirmations)} confirmations)`,
      value: coinsWei(s.valueWei),
      fee: s.feeWei === null ? `up to ${coins(v.fee)} (pending)` : coinsWei(s.feeWei),
      toProposer: s.toProposerWei === null ? null : coinsWei(s.toProposerWei),
      burned: s.burnedWei === null ? null : coinsWei(s.burnedWei),
      proposer,
      nonce: String(v.nonce),
      signedAt: time(v.timestamp),
      chainId: String(v.chain_id),
      ...(await operationViews(ctx, s)),
      failureReason: s.failureReason,
      evm: evm
        ? {
            gasLimit: s.gasLimit === null ? '' : gas(s.gasLimit),
            gasUsed: s.gasUsed === null ? '' : gas(s.gasUsed),
            price: s.receipt ? `${gas(s.receipt.effectiveGasPrice)} wei` : '',
            input: s.input,
            created: s.contractCreated ? addrView(s.contractCreated) : null,
          }
        : null,
      calls,
      traceUnavailable: trace && 'unavailable' in trace ? trace.unavailable : null,
      tracePending: trace !== null && 'pending' in trace,
      // The call tree is still being traced: the browser asks again shortly (no script needed).
      refresh: trace !== null && 'pending' in trace ? TRACE_REFRESH_SECONDS : undefined,
      logs: s.receipt ? await decodedLogs(ctx, s.receipt.logs, verified) : [],
      call: evm && s.to ? await decodedCall(s.to, s.input) : null,
      signature: v.signature,
      publicKey: v.public_key,
    }),
  );
};
