/**
 * Templates rendered with Eta (autoEscape on: every `<%= %>` value is HTML-escaped, `<%~ %>` is used only
 * for the output of our own templates). Templates are compiled once, from strings in ./templates.
 */
import { Eta } from 'eta/core';
import type { NodeContext } from '../services/index.js';
import { chainSummary } from './read-model.js';
import { EXPLORER_ROOT, links } from './links.js';
import { TEMPLATES } from './templates/index.js';

const eta = new Eta({ autoEscape: true, autoTrim: false, cache: true, useWith: false, varName: 'it' });
for (const [name, source] of Object.entries(TEMPLATES)) eta.loadTemplate(`@${name}`, source);

export type TemplateName = keyof typeof TEMPLATES;

/** What the layout shows on every page. */
export interface SiteView {
  name: string;
  chainId: number;
  consensus: string;
  height: number;
  headLink: string;
  version: string;
  links: typeof links;
}

export function siteView(ctx: NodeContext): SiteView {
  const c = chainSummary(ctx);
  return {
    name: ctx.nodeName || 'native',
    chainId: c.chainId,
    consensus: c.consensus,
    height: c.height,
    headLink: links.block(c.height),
    version: ctx.version,
    links,
  };
}

export interface PageData {
  title: string;
  /** The search text to show again in the box. */
  q?: string;
  [key: string]: unknown;
}

/** A full page: the named template inside the layout. */
export function renderPage(ctx: NodeContext, template: TemplateName, data: PageData): string {
  return eta.render(`@${template}`, { ...data, site: siteView(ctx) });
}

export { EXPLORER_ROOT };
