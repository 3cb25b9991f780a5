/**
 * Paths of explorer pages. Every part comes from a validated value (heights, hex ids, addresses, SRC20_
 * contracts, SRC721_ collections, token ids) or is percent-encoded, and templates escape the result again like any other value.
 */
export const EXPLORER_ROOT = '/explorer';

const enc = encodeURIComponent;

export const links = {
  home: EXPLORER_ROOT,
  blocks: `${EXPLORER_ROOT}/blocks`,
  transactions: `${EXPLORER_ROOT}/transactions`,
  validators: `${EXPLORER_ROOT}/validators`,
  tokens: `${EXPLORER_ROOT}/tokens`,
  nfts: `${EXPLORER_ROOT}/nfts`,
  richlist: `${EXPLORER_ROOT}/richlist`,
  mempool: `${EXPLORER_ROOT}/mempool`,
  search: `${EXPLORER_ROOT}/search`,
  stylesheet: `${EXPLORER_ROOT}/static/style.css`,
  favicon: `${EXPLORER_ROOT}/static/favicon.svg`,
  block: (height: number): string => `${EXPLORER_ROOT}/block/${height}`,
  tx: (txid: string): string => `${EXPLORER_ROOT}/tx/${enc(txid)}`,
  address: (address: string): string => `${EXPLORER_ROOT}/address/${enc(address)}`,
  validator: (address: string): string => `${EXPLORER_ROOT}/validators/${enc(address)}`,
  token: (contract: string): string => `${EXPLORER_ROOT}/tokens/${enc(contract)}`,
  collection: (address: string): string => `${EXPLORER_ROOT}/nfts/${enc(address)}`,
  nft: (collection: string, tokenId: bigint | number | string): string =>
    `${EXPLORER_ROOT}/nfts/${enc(collection)}/${enc(String(tokenId))}`,
};

/** `path?page=n&limit=m` (limit only when not the page's default). */
export function pageLink(path: string, page: number, limit: number, defaultLimit: number): string {
  const q = new URLSearchParams({ page: String(page) });
  if (limit !== defaultLimit) q.set('limit', String(limit));
  return `${path}?${q}`;
}
