/** Monetary constants. All amounts are bigint; REST speaks base units, JSON-RPC and state speak wei. */
import { formatUnits } from '../../util/index.js';

export const BASE_PER_COIN = 100_000_000n;
export const WEI_PER_BASE = 10_000_000_000n;
export const WEI_PER_COIN = BASE_PER_COIN * WEI_PER_BASE;
/** MIN_TX_FEE = 0.0001 coin. */
export const MIN_TX_FEE_BASE = 10_000n;
export const MAX_U64 = (1n << 64n) - 1n;
export const ZERO_ADDRESS = `0x${'0'.repeat(40)}`;
/** Flat gas charged to every non-EVM transaction. */
export const NATIVE_TX_GAS = 21_000n;

export const baseToWei = (base: bigint): bigint => base * WEI_PER_BASE;
/** Base units of a wei balance, rounded down (wei dust below one base unit is not shown in REST). */
export const weiToBase = (wei: bigint): bigint => wei / WEI_PER_BASE;
/** Base units that cover a wei amount, rounded up (a worst-case spend is never under-counted). */
export const weiToBaseCeil = (wei: bigint): bigint => (wei + WEI_PER_BASE - 1n) / WEI_PER_BASE;

/** Coin amount as a JSON number for `_native` fields (display only; exact amounts use base units). */
export function baseToNative(base: bigint): number {
  const whole = base / BASE_PER_COIN;
  const frac = base % BASE_PER_COIN;
  return Number(`${whole}.${frac.toString().padStart(8, '0')}`);
}

/** The native coin's ticker (the node's /native_status says the same). */
export const COIN_TICKER = 'NATIVE';
export const BASE_DECIMALS = 8;
export const WEI_DECIMALS = 18;

/** Base units as coins for people: 1000150000000n -> "10,001.5 NATIVE" (the wallet and the explorer). */
export const formatBase = (base: bigint): string => `${formatUnits(base, BASE_DECIMALS)} ${COIN_TICKER}`;

/** Wei as coins, exact to the wei (proofs and EVM fees are in wei). */
export const formatWei = (wei: bigint): string => `${formatUnits(wei, WEI_DECIMALS)} ${COIN_TICKER}`;
