/** Amounts as the wallet shows and reads them: coins with the ticker for people, base units with --raw. */
import { BASE_DECIMALS, BASE_PER_COIN, COIN_TICKER, baseToWei, formatBase, formatWei, weiToBase } from '../ledger/index.js';

export { COIN_TICKER, formatBase, formatWei };

/** A wallet argument or answer it cannot use; the message is for the user as is. */
export class WalletUsageError extends Error {
  readonly code = 'USAGE';
}

/** Base units, or coins with --raw unset; for wei amounts that are not whole base units the wei are shown too. */
export function showBase(base: bigint, raw: boolean): string {
  return raw ? String(base) : formatBase(base);
}

export function showWei(wei: bigint, raw: boolean): string {
  if (!raw) return formatWei(wei);
  const base = weiToBase(wei);
  const dust = wei - baseToWei(base);
  return dust === 0n ? String(base) : `${base} (+${dust} wei)`;
}

/**
 * An amount argument: a whole number of base units (`150000000`), or coins with the ticker (`1.5NATIVE`,
 * `1.5 native`). Zero is allowed only where `allowZero`; negative numbers and fractions of a base unit are refused
 * with a plain message.
 */
export function parseAmount(flag: string, raw: string, allowZero = false): bigint {
  const s = raw.trim();
  const bad = (why: string) => new WalletUsageError(`--${flag} ${why}, got ${JSON.stringify(raw)}`);
  if (s.startsWith('-')) throw bad('must not be negative');
  const coins = new RegExp(`^(\\d+)(?:\\.(\\d+))?\\s*${COIN_TICKER}$`, 'i').exec(s);
  let base: bigint;
  if (coins) {
    const frac = coins[2] ?? '';
    if (frac.length > BASE_DECIMALS)
      throw bad(`has more than ${BASE_DECIMALS} decimals (1 base unit = 0.00000001 ${COIN_TICKER})`);
    base = BigInt(coins[1]) * BASE_PER_COIN + BigInt(frac.padEnd(BASE_DECIMALS, '0') || '0');
  } else if (/^\d+$/.test(s)) {
    base = BigInt(s);
  } else {
    throw bad(`must be a whole number of base units or coins such as 1.5${COIN_TICKER}`);
  }
  if (base === 0n && !allowZero) throw bad('must be greater than zero');
  return base;
}
