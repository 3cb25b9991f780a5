/** The monetary constants and unit helpers live with the native modules (ts/modules/kit/units.ts); the ledger re-exports them. */
export {
  BASE_PER_COIN,
  WEI_PER_BASE,
  WEI_PER_COIN,
  MIN_TX_FEE_BASE,
  MAX_U64,
  ZERO_ADDRESS,
  NATIVE_TX_GAS,
  baseToWei,
  weiToBase,
  weiToBaseCeil,
  baseToNative,
  COIN_TICKER,
  BASE_DECIMALS,
  WEI_DECIMALS,
  formatBase,
  formatWei,
} from '../modules/index.js';
