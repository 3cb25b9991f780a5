/** Every template by name (rendered as `@name`): one layout, shared partials, one template per page. */
import { address } from './address.js';
import { block, blocks } from './blocks.js';
import { home } from './home.js';
import { errorPage, layout } from './layout.js';
import { richlist, searchNotFound } from './misc.js';
import { addr, barChart, blocksTable, pager, shareChart, timeTag, txsTable } from './partials.js';
import { token, tokens } from './tokens.js';
import { nftCollection, nftCollections, nftEvents, nftToken } from './nfts.js';
import { mempool, transactions, tx } from './transactions.js';
import { validator, validators } from './validators.js';

export const TEMPLATES = {
  layout,
  errorPage,
  time: timeTag,
  addr,
  blocksTable,
  txsTable,
  pager,
  barChart,
  shareChart,
  home,
  blocks,
  block,
  transactions,
  tx,
  mempool,
  validators,
  validator,
  tokens,
  token,
  nftEvents,
  nftCollections,
  nftCollection,
  nftToken,
  address,
  richlist,
  searchNotFound,
} as const;
