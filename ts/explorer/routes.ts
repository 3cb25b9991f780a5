/**
 * The explorer's pages by path (find-my-way patterns), every alias the spec lists, and the one place that
 * turns a page's failure into an error page: malformed input 400, unknown things 404, anything else 500
 * (logged by the caller), always HTML with the security headers.
 */
import type { NodeContext } from '../services/index.js';
import { type FailureStatus, InvalidParamsError, InvalidTransactionError, NodeError, NotFoundError } from '../util/index.js';
import { EXPLORER_ROOT } from './links.js';
import { addressPage } from './pages/address.js';
import { blockPage, blocksListPage } from './pages/blocks.js';
import type { PageHandler } from './pages/common.js';
import { homePage } from './pages/home.js';
import { collectionPage, collectionsPage, nftTokenPage } from './pages/nfts.js';
import { richlistPage } from './pages/richlist.js';
import { searchPage } from './pages/search.js';
import { tokenPage, tokensPage } from './pages/tokens.js';
import { mempoolPage, transactionsPage, txPage } from './pages/transactions.js';
import { validatorPage, validatorsPage } from './pages/validators.js';
import { renderPage } from './render.js';
import { CSS_HEADERS, type PageRequest, type PageResponse, SVG_HEADERS, html } from './response.js';
import { FAVICON_SVG, STYLESHEET } from './static.js';

export interface ExplorerRoute {
  path: string;
  summary: string;
  page: PageHandler;
}

const R = EXPLORER_ROOT;

export const explorerRoutes: readonly ExplorerRoute[] = [
  {
    path: R,
    summary: 'Explorer home: latest blocks and transactions, head and finality, TPS, supply, validators',
    page: homePage,
  },
  { path: `${R}/blocks`, summary: 'Blocks, newest first (?page=, ?limit=)', page: blocksListPage },
  { path: `${R}/block/:id`, summary: 'A block by height (a block hash redirects to its height)', page: blockPage },
  { path: `${R}/transactions`, summary: 'Recent transactions, newest first (?page=, ?limit=)', page: transactionsPage },
  { path: `${R}/tx/:txid`, summary: 'A transaction: status, fee split, operation or EVM call tree and logs', page: txPage },
  { path: `${R}/validators`, summary: 'Validators: stake, commission, uptime, status, blocks', page: validatorsPage },
  { path: `${R}/validators/:address`, summary: 'A validator: rewards, delegators, blocks per epoch', page: validatorPage },
  { path: `${R}/validator/:address`, summary: 'Alias of /explorer/validators/{address}', page: validatorPage },
  { path: `${R}/tokens`, summary: 'SRC-20 tokens', page: tokensPage },
  {
    path: `${R}/tokens/:contract`,
    summary: 'A token: holders with percentages, transfers, holder distribution',
    page: tokenPage,
  },
  { path: `${R}/token/:contract`, summary: 'Alias of /explorer/tokens/{contract}', page: tokenPage },
  { path: `${R}/nfts`, summary: 'SRC-721 NFT collections', page: collectionsPage },
  {
    path: `${R}/nfts/:collection`,
    summary: 'An NFT collection: tokens, holders, events (?tab=)',
    page: collectionPage,
  },
  { path: `${R}/nft/:collection`, summary: 'Alias of /explorer/nfts/{collection}', page: collectionPage },
  {
    path: `${R}/nfts/:collection/:id`,
    summary: 'An NFT: owner, URI, history',
    page: nftTokenPage,
  },
  { path: `${R}/nft/:collection/:id`, summary: 'Alias of /explorer/nfts/{collection}/{token_id}', page: nftTokenPage },
  {
    path: `${R}/address/:address`,
    summary: 'An address: balance, nonce, transactions, holdings, contract code',
    page: addressPage,
  },
  { path: `${R}/richlist`, summary: 'Largest balances', page: richlistPage },
  { path: `${R}/mempool`, summary: 'Pending transactions', page: mempoolPage },
  { path: `${R}/search`, summary: 'Search box target: redirects to the page named by ?q=, or "not found"', page: searchPage },
  {
    path: `${R}/static/style.css`,
    summary: 'The stylesheet',
    page: () => ({ status: 200, headers: CSS_HEADERS, body: STYLESHEET }),
  },
  {
    path: `${R}/static/favicon.svg`,
    summary: 'The favicon',
    page: () => ({ status: 200, headers: SVG_HEADERS, body: FAVICON_SVG }),
  },
  {
    path: `${R}/*`,
    summary: 'Any other explorer path: a 404 page (400 when it is not valid percent-encoding)',
    page: (_ctx, req) => unknownPage(req),
  },
];

function unknownPage(req: PageRequest): never {
  try {
    decodeURIComponent(req.params['*'] ?? '');
  } catch {
    throw new InvalidParamsError('The address of this page is not valid percent-encoding.');
  }
  throw new NotFoundError('There is no explorer page at this address.');
}

/** The explorer's one mapping from a node failure (util/errors.ts) to its error page. */
const PAGE_STATUS: Record<FailureStatus, 400 | 404 | 500 | 503> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  PERMISSION_DENIED: 400,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 503,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 503,
  INTERNAL: 500,
};

function pageStatusOf(err: NodeError): 400 | 404 | 500 | 503 {
  // A refused submission is the request's fault, a full pool included (as on REST).
  return err instanceof InvalidTransactionError ? 400 : PAGE_STATUS[err.status];
}

/** Longest part of a bad request shown back on its error page. */
const MAX_ECHOED_INPUT = 200;

const HEADINGS: Record<number, string> = { 400: 'Malformed request', 404: 'Not found', 500: 'Something went wrong', 503: 'Busy' };

/** An error page in the layout (the message is escaped like every value). */
export function errorPage(ctx: NodeContext, status: number, message: string, input?: string): PageResponse {
  return html(
    renderPage(ctx, 'errorPage', { title: HEADINGS[status] ?? 'Error', heading: HEADINGS[status] ?? 'Error', message, input }),
    status,
  );
}

/**
 * Run a page; a NodeError becomes its status's page (pageStatusOf), anything else a 500 page and
 * `onError`. Input that reached a 400/404 is shown back (escaped) so people see what they asked for.
 */
export async function servePage(
  ctx: NodeContext,
  route: ExplorerRoute,
  req: PageRequest,
  onError?: (err: unknown) => void,
): Promise<PageResponse> {
  try {
    return await route.page(ctx, req);
  } catch (err) {
    const input = Object.values(req.params)[0]?.slice(0, MAX_ECHOED_INPUT);
    const status = err instanceof NodeError ? pageStatusOf(err) : 500;
    if (err instanceof NodeError && status === 503) {
      return errorPage(ctx, 503, `The node is busy: ${err.message}. Try again in a moment.`);
    }
    if (err instanceof NodeError && status !== 500) return errorPage(ctx, status, err.message, input);
    onError?.(err);
    return errorPage(ctx, 500, 'The node could not build this page. The error has been logged.');
  }
}
