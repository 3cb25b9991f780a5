/**
 * The dev chain's accounts: the first DEV_ACCOUNT_COUNT keys of the dev mnemonic (the same accounts as
 * Hardhat's and anvil's defaults, funded at genesis), which the node signs for (eth_sendTransaction,
 * eth_sign, personal_sign, eth_signTypedData_v4), and the addresses it impersonates (anvil_impersonateAccount:
 * unsigned transactions from them, execution/impersonation.ts).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { HashTypedDataParameters } from 'viem';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic } from '../ledger/index.js';
import { InvalidParamsError, ServerError, fromHex } from '../util/index.js';

/** Accounts the dev chain funds at genesis and signs for (genesis-params.ts funds the same ten). */
export const DEV_ACCOUNT_COUNT = 10;

/** What may send from an address: its dev key, or impersonation. */
export type Sender = { kind: 'key'; key: KeyPair } | { kind: 'impersonated' };

/** geth's and Hardhat's words for an address the node holds no key for. */
export class UnknownAccountError extends ServerError {
  constructor(address: string) {
    super(`unknown account ${address}`);
  }
}

export class DevAccounts {
  private readonly keys: KeyPair[];
  private readonly byAddress: Map<string, KeyPair>;
  private readonly impersonating = new Set<string>();

  constructor(count = DEV_ACCOUNT_COUNT) {
    this.keys = Array.from({ length: count }, (_, i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
    this.byAddress = new Map(this.keys.map((k) => [k.address, k]));
  }

  /** eth_accounts: the dev accounts in mnemonic order (lower-case addresses). */
  addresses(): string[] {
    return this.keys.map((k) => k.address);
  }

  impersonate(address: string): void {
    this.impersonating.add(address.toLowerCase());
  }

  /** True when the address was impersonated. */
  stopImpersonating(address: string): boolean {
    return this.impersonating.delete(address.toLowerCase());
  }

  impersonated(): string[] {
    return [...this.impersonating];
  }

  /** Forget every impersonation (anvil_reset, evm_revert to a snapshot taken before it). */
  restoreImpersonated(addresses: readonly string[]): void {
    this.impersonating.clear();
    for (const a of addresses) this.impersonating.add(a);
  }

  /** How the node may send from `address` (a dev key wins over impersonation). UnknownAccountError otherwise. */
  sender(address: string): Sender {
    const a = address.toLowerCase();
    const key = this.byAddress.get(a);
    if (key) return { kind: 'key', key };
    if (this.impersonating.has(a)) return { kind: 'impersonated' };
    throw new UnknownAccountError(address);
  }

  /** The key of a dev account (signing methods: an impersonated address has none). */
  signer(address: string): KeyPair {
    const key = this.byAddress.get(address.toLowerCase());
    if (!key) throw new UnknownAccountError(address);
    return key;
  }
}

/** An Ethereum signature of a 32-byte hash: r || s || v with v = 27 + recovery id, as 0x hex. */
export function signHash(hash: Uint8Array, key: KeyPair): string {
  const rec = secp256k1.sign(hash, key.privateKey, { prehash: false, format: 'recovered' });
  // noble's recovered format is recovery || r || s.
  const out = Buffer.alloc(65);
  out.set(rec.subarray(1, 65), 0);
  out[64] = 27 + rec[0];
  return `0x${out.toString('hex')}`;
}

/** viem, loaded on first use: importing it costs about a second, which a node's start should not pay. */
const viem = () => import('viem');

/** EIP-191 personal message signature (eth_sign and personal_sign, as geth and MetaMask sign). */
export async function signMessage(message: Uint8Array, key: KeyPair): Promise<string> {
  const { hashMessage } = await viem();
  return signHash(fromHex(hashMessage({ raw: message })), key);
}

/** EIP-712 signature of eth_signTypedData_v4's payload (an object, or its JSON text as Hardhat sends it). */
export async function signTypedData(payload: unknown, key: KeyPair): Promise<string> {
  const { hashTypedData } = await viem();
  let data = payload;
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      throw new InvalidParamsError('invalid argument 1: typed data must be an object or its JSON text');
    }
  }
  const d = data as Partial<HashTypedDataParameters>;
  if (typeof d !== 'object' || d === null || typeof d.types !== 'object' || typeof d.primaryType !== 'string') {
    throw new InvalidParamsError('invalid argument 1: typed data needs types, primaryType, domain and message');
  }
  let hash: `0x${string}`;
  try {
    hash = hashTypedData({
      domain: d.domain ?? {},
      types: d.types,
      primaryType: d.primaryType,
      message: d.message ?? {},
    } as never);
  } catch (err) {
    throw new InvalidParamsError(`invalid typed data: ${(err as Error).message.split('\n')[0]}`);
  }
  return signHash(fromHex(hash), key);
}
