/**
 * The dev chain's direct state writes (anvil_setBalance, anvil_setCode, anvil_setStorageAt, anvil_setNonce and
 * the hardhat_ aliases): computed on an overlay of the live state, then written through the chain, which makes
 * them part of the next block (chain/dev-patches.ts, docs/dev-chain.md).
 */
import type { Chain } from '../chain/index.js';
import { keccak256 } from '../crypto/index.js';
import { getSupply, putSupply } from '../ledger/index.js';
import { codeKey, getAccount, putAccount, storageKey, StateOverlay } from '../state/index.js';
import { fromHex } from '../util/index.js';

async function write(chain: Chain, edit: (o: StateOverlay) => void): Promise<void> {
  await chain.settled();
  const overlay = new StateOverlay(chain.state);
  edit(overlay);
  await chain.writeDevState(overlay.changes);
}

/**
 * Set an account's balance (wei). The supply totals follow (a raise counts as minted, a cut as burned), so
 * minted - burned stays the sum of the balances.
 */
export function setBalance(chain: Chain, address: string, wei: bigint): Promise<void> {
  return write(chain, (o) => {
    const acc = getAccount(o, address);
    const supply = getSupply(o);
    if (wei > acc.balance) supply.minted += wei - acc.balance;
    else supply.burned += acc.balance - wei;
    acc.balance = wei;
    putAccount(o, address, acc);
    putSupply(o, supply);
  });
}

export function setNonce(chain: Chain, address: string, nonce: bigint): Promise<void> {
  return write(chain, (o) => {
    const acc = getAccount(o, address);
    acc.nonce = nonce;
    putAccount(o, address, acc);
  });
}

/** Replace an account's code (empty code makes it an account without code); its storage is kept, as anvil does. */
export function setCode(chain: Chain, address: string, code: Uint8Array): Promise<void> {
  return write(chain, (o) => {
    const acc = getAccount(o, address);
    if (code.length === 0) {
      o.delete(codeKey(address));
      acc.codeHash = undefined;
    } else {
      o.set(codeKey(address), Buffer.from(code));
      acc.codeHash = keccak256(code);
    }
    putAccount(o, address, acc);
  });
}

/** Set one storage slot to a 32-byte value (stored without leading zeros; zero removes the slot). */
export function setStorageAt(chain: Chain, address: string, slot: bigint, value: bigint): Promise<void> {
  return write(chain, (o) => {
    const k = storageKey(fromHex(address), fromHex(slot.toString(16).padStart(64, '0')));
    if (value === 0n) o.delete(k);
    else {
      const hex = value.toString(16);
      o.set(k, Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex'));
    }
  });
}
