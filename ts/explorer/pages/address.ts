/** GET /explorer/address/{address}: balance, nonce, transactions, holdings, contract code and verification. */
import {
  accountCode,
  accountTokens,
  addressHistory,
  addressInfo,
  findValidator,
  getPendingNonce,
  summarizeTransactions,
} from '../../services/index.js';
import { coins, int, tokenAmount } from '../format.js';
import { links } from '../links.js';
import { addressParam, pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView, txRow } from '../rows.js';
import { verifiedContract } from '../verification.js';
import { type PageHandler, pager } from './common.js';

export const ADDRESS_TXS_PAGE = 25;

export const addressPage: PageHandler = async (ctx, req) => {
  const address = addressParam(req.params.address ?? '');
  const p = pagingParams(req.query, ADDRESS_TXS_PAGE);
  const info = addressInfo(ctx, address);
  const [history, evmTokens, verified] = await Promise.all([
    addressHistory(ctx, address, p.offset, p.limit),
    accountTokens(ctx, address),
    info.is_contract ? verifiedContract(ctx, address) : Promise.resolve(null),
  ]);
  const summaries = await summarizeTransactions(ctx, history.transactions);
  const validator = findValidator(ctx, address);
  const code = info.is_contract ? accountCode(ctx, address) : null;
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
      ],
      tokens: evmTokens.tokens.map((t) => ({
        contract: addrView(t.contract, t.name ?? undefined),
        symbol: t.symbol ?? '',
        balance: t.decimals === null ? t.balance : tokenAmount(BigInt(t.balance), t.decimals, t.symbol ?? ''),
        standard: 'ERC-20 (EVM)',
      })),
      code: code === null ? null : { bytes: int((code.length - 2) / 2), hex: code },
      verified: verified
        ? {
            status: verified.status,
            name: verified.name,
            compiler: verified.compiler,
            files: verified.files,
          }
        : null,
      txs: history.transactions.map((t, i) => txRow(t, summaries[i])),
      pager: pager(links.address(address), p, ADDRESS_TXS_PAGE, history.total),
    }),
  );
};
