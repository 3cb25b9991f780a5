/** Shared by the page handlers: the page type, the pager and validator names. */
import type { NodeContext } from '../../services/index.js';
import { InvalidParamsError } from '../../util/index.js';
import { int } from '../format.js';
import { pageLink } from '../links.js';
import { MAX_LIST_OFFSET, type Paging } from '../params.js';
import type { PageRequest, PageResponse } from '../response.js';
import type { PagerView } from '../rows.js';

export type PageHandler = (ctx: NodeContext, req: PageRequest) => PageResponse | Promise<PageResponse>;

/**
 * Pager links for a list at `path`. `total` entries when known (pages beyond MAX_LIST_OFFSET are not
 * offered), else `hasMore` says whether a next page exists.
 */
export function pager(path: string, p: Paging, defaultLimit: number, total: number | null, hasMore = false): PagerView {
  const reachable = total === null ? null : Math.min(total, MAX_LIST_OFFSET);
  const pages = reachable === null ? null : Math.max(1, Math.ceil(reachable / p.limit));
  const next = pages === null ? hasMore : p.page < pages;
  return {
    page: p.page,
    pages: pages === null ? null : int(pages),
    prev: p.page > 1 ? pageLink(path, p.page - 1, p.limit, defaultLimit) : null,
    next: next && p.offset + p.limit < MAX_LIST_OFFSET ? pageLink(path, p.page + 1, p.limit, defaultLimit) : null,
  };
}

/** Pager links of one tab of a page (`?tab=name&page=n`). */
export function tabPager(path: string, tab: string, p: Paging, defaultLimit: number, total: number): PagerView {
  const v = pager(path, p, defaultLimit, total);
  const withTab = (href: string | null) => (href === null ? null : href.replace('?', `?tab=${encodeURIComponent(tab)}&`));
  return { ...v, prev: withTab(v.prev), next: withTab(v.next) };
}

/** `?tab=`: one of `tabs`, or `fallback` when absent (400 otherwise). */
export function tabParam<T extends string, F extends T | ''>(q: URLSearchParams, tabs: readonly T[], fallback: F): T | F {
  const tab = q.get('tab') ?? '';
  if (tab === '') return fallback;
  if (!(tabs as readonly string[]).includes(tab)) throw new InvalidParamsError(`tab is one of ${tabs.join(', ')}`);
  return tab as T;
}

export { validatorNames } from '../read-model.js';
