/** Values as people read them: amounts with units and thousands separators, times relative with the absolute one. */
import { COIN_TICKER, formatBase, formatWei } from '../ledger/index.js';
import { formatUnits, groupThousands } from '../util/index.js';

export { COIN_TICKER, formatBase as coins, formatWei as coinsWei };

/** 1234567 -> "1,234,567". */
export const int = (n: number | bigint): string => groupThousands(n);

/** A token amount in its own units: "1,000.25 ABC" (the symbol is shown escaped by the template like any value). */
export const tokenAmount = (units: bigint, decimals: number, symbol: string): string =>
  `${formatUnits(units, decimals)} ${symbol}`;

/** Share in percent with up to 4 decimals: 12.5 -> "12.5%". */
export const percent = (p: number): string => `${Number.isFinite(p) ? Math.round(p * 10_000) / 10_000 : 0}%`;

/** "0x1234…abcd" for tables; the full value stays in the link and its title. */
export function short(value: string, keep = 8): string {
  return value.length <= 2 * keep + 1 ? value : `${value.slice(0, keep)}…${value.slice(-keep + 2)}`;
}

export interface TimeView {
  /** "5 min ago" / "in 3 s" */
  rel: string;
  /** "2026-01-02 03:04:05 UTC", shown on hover */
  abs: string;
  /** ISO 8601 for <time datetime> */
  iso: string;
}

const UNITS: [number, string][] = [
  [86_400 * 365, 'y'],
  [86_400 * 30, 'mo'],
  [86_400, 'd'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** Unix seconds as a relative time (against the server's clock when the page is rendered) and the absolute UTC time. */
export function time(unixSeconds: number, nowMs = Date.now()): TimeView {
  const d = new Date(unixSeconds * 1000);
  const iso = Number.isFinite(d.getTime()) ? d.toISOString() : '';
  const abs = iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : 'unknown';
  const diff = Math.round(nowMs / 1000 - unixSeconds);
  const a = Math.abs(diff);
  let rel = 'just now';
  if (a >= 1) {
    const [size, unit] = UNITS.find(([s]) => a >= s) ?? UNITS[UNITS.length - 1];
    const n = Math.floor(a / size);
    rel = diff > 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
  }
  return { rel, abs, iso };
}

/** Gas and other counts with separators. */
export const gas = (g: bigint | number): string => groupThousands(g);
