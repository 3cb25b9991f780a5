/**
 * The built-in block explorer: server-rendered HTML pages under /explorer (Eta templates with automatic
 * escaping, one layout, one stylesheet, inline SVG charts, no client JavaScript), built from ts/services
 * queries only. ts/api serves the route table on the node's HTTP port; docs/explorer.md.
 */
export { type ExplorerRoute, errorPage, explorerRoutes, servePage } from './routes.js';
export { CONTENT_SECURITY_POLICY, type PageRequest, type PageResponse } from './response.js';
export { EXPLORER_ROOT, links } from './links.js';
