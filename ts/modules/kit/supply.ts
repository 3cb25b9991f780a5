import { type KeyStr, type StateOverlay, type StateReader, keyStr, NS } from '../../state/index.js';
import { BASE_PER_COIN } from './units.js';

/** Totals kept in the authenticated state so every node agrees on them (wei). */
export interface Supply {
  minted: bigint;
  burned: bigint;
}

const SUPPLY_KEY: KeyStr = keyStr(Buffer.concat([Buffer.from([NS.meta]), Buffer.from('supply')]));

export function getSupply(state: StateReader): Supply {
  const raw = state.get(SUPPLY_KEY);
  if (!raw) return { minted: 0n, burned: 0n };
  return { minted: BigInt(`0x${raw.toString('hex', 0, 32)}`), burned: BigInt(`0x${raw.toString('hex', 32, 64)}`) };
}

export function putSupply(state: StateOverlay, s: Supply): void {
  state.set(SUPPLY_KEY, Buffer.from(s.minted.toString(16).padStart(64, '0') + s.burned.toString(16).padStart(64, '0'), 'hex'));
}

export const MAX_SUPPLY_V1_COIN = 210_000_000n;
export const MAX_SUPPLY_V2_COIN = 315_000_000n;
export const maxSupplyBase = (height: number, tokenomicsV2Height: number): bigint =>
  (height >= tokenomicsV2Height ? MAX_SUPPLY_V2_COIN : MAX_SUPPLY_V1_COIN) * BASE_PER_COIN;
