/**
 * Impersonated transactions of the dev chain (anvil_impersonateAccount, docs/dev-chain.md): an EVM
 * transaction sent from an address whose key nobody holds. Its raw bytes carry a marker instead of a
 * signature: r = the sender's address, s = 1 (no real signature has s = 1: a 2^-256 event). The sender is
 * read from r, so the transaction is stored, gossiped and replayed like any other; only a chain whose
 * parameters say `dev` accepts it (admission when the node impersonates the sender, block validity always
 * on the dev chain); everywhere else it is an invalid signature.
 */
import type { Common } from '@ethereumjs/common';
import { type TypedTransaction, type TypedTxData, createTx, createTxFromRLP } from '@ethereumjs/tx';
import { type Address, createAddressFromString } from '@ethereumjs/util';

const MARKER_S = 1n;
const ADDRESS_LIMIT = 1n << 160n;

/** The impersonated sender a transaction's signature names, or null for an ordinary signature. */
export function impersonatedSender(t: TypedTransaction): string | null {
  if (t.s !== MARKER_S || t.r === undefined || t.r === 0n || t.r >= ADDRESS_LIMIT) return null;
  return `0x${t.r.toString(16).padStart(40, '0')}`;
}

/** The same transaction, decoded again unfrozen, reporting the impersonated address as its sender. */
export function withImpersonatedSender(raw: Uint8Array, common: Common, sender: string): TypedTransaction {
  const t = createTxFromRLP(raw, { common, freeze: false });
  const address: Address = createAddressFromString(sender);
  Object.defineProperty(t, 'getSenderAddress', { value: () => address });
  return t;
}

/**
 * The raw bytes of an unsigned transaction from `from` with the impersonation marker as its signature.
 * `data` holds every field but the signature (type, nonce, gas, fees, to, value, data, access list).
 */
export function impersonatedRawTransaction(data: TypedTxData, from: string, common: Common): Uint8Array {
  const type = Number((data as { type?: unknown }).type ?? 2);
  // Typed transactions carry yParity; a legacy one the EIP-155 v of this chain.
  const v = type === 0 ? common.chainId() * 2n + 35n : 0n;
  const tx = createTx({ ...data, v, r: BigInt(from), s: MARKER_S } as TypedTxData, { common });
  return tx.serialize();
}
