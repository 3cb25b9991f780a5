/** GET /explorer/search?q=: a redirect to the page the text names, or a "not found" page. */
import { MAX_SEARCH_LENGTH, resolveSearch } from '../read-model.js';
import { links } from '../links.js';
import { renderPage } from '../render.js';
import { html, redirect } from '../response.js';
import type { PageHandler } from './common.js';

export const searchPage: PageHandler = async (ctx, req) => {
  const q = (req.query.get('q') ?? '').slice(0, MAX_SEARCH_LENGTH);
  const target = await resolveSearch(ctx, q);
  if (target) {
    switch (target.kind) {
      case 'block':
        return redirect(links.block(target.height));
      case 'tx':
        return redirect(links.tx(target.txid));
      case 'address':
        return redirect(links.address(target.address));
      case 'token':
        return redirect(links.token(target.contract));
      case 'collection':
        return redirect(links.collection(target.address));
    }
  }
  return html(
    renderPage(ctx, 'searchNotFound', {
      title: 'Not found',
      q,
      empty: q.trim() === '',
    }),
    q.trim() === '' ? 200 : 404,
  );
};
