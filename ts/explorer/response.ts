/** What an explorer page answers, and the headers every explorer answer carries. */

/** One page request: path parameters (decoded by the router) and the query. */
export interface PageRequest {
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
}

export interface PageResponse {
  status: number;
  headers: Readonly<Record<string, string>>;
  body?: string;
}

/**
 * No script may run (there is none: the explorer needs no JavaScript), styles come from our stylesheet
 * only, images only from us or inline data (the favicon), forms post only to us, no framing, no <base>.
 * Inline SVG is markup, not an image, so charts need nothing more.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

/** Shared and frozen: the HTTP layer checks a frozen header set once. */
export const HTML_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...SECURITY_HEADERS,
  'content-type': 'text/html; charset=utf-8',
  // Pages show the live chain: a browser revalidates instead of showing a stale head.
  'cache-control': 'no-cache',
});

export const CSS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...SECURITY_HEADERS,
  'content-type': 'text/css; charset=utf-8',
  'cache-control': 'public, max-age=3600',
});

export const SVG_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...SECURITY_HEADERS,
  'content-type': 'image/svg+xml',
  'cache-control': 'public, max-age=86400',
});

export const html = (body: string, status = 200): PageResponse => ({ status, headers: HTML_HEADERS, body });

/** 303 See Other to a path we built from validated parts (search results, canonical aliases). */
export const redirect = (location: string): PageResponse => ({
  status: 303,
  headers: { ...SECURITY_HEADERS, location, 'cache-control': 'no-cache' },
});
