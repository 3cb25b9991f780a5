/** Amounts for people: digits grouped by thousands, decimals exact (bigint end to end, never a JS number). */

/** 1234567n -> "1,234,567". */
export function groupThousands(whole: bigint | number): string {
  return String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `units` with `decimals` decimals as "10,001.5" (trailing zeros dropped, every digit kept). */
export function formatUnits(units: bigint, decimals: number): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  if (decimals === 0) return `${sign}${groupThousands(abs)}`;
  const scale = 10n ** BigInt(decimals);
  const frac = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${sign}${groupThousands(abs / scale)}${frac ? `.${frac}` : ''}`;
}
