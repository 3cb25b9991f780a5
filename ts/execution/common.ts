import { paramsBlock } from '@ethereumjs/block';
import { type Common, Mainnet, type ParamsDict, createCustomCommon } from '@ethereumjs/common';
import { paramsEVM } from '@ethereumjs/evm';
import { paramsTx } from '@ethereumjs/tx';
import { paramsVM } from '@ethereumjs/vm';
import { randomBytes } from 'node:crypto';
import { crypto, keccak256 } from '../crypto/index.js';

/** Where the VM pays fees during a transaction; the executor moves them out right after (docs/economics.md). */
export const FEE_COLLECTOR = `0x${'00'.repeat(19)}fe`;

/** ethereumjs' recovery id rule: 0/1 as is, 27/28 legacy, else EIP-155 (v - 2*chainId - 35). */
function recoveryId(v: bigint, chainId?: bigint): number {
  if (v === 0n || v === 1n) return Number(v);
  const r = chainId === undefined ? v - 27n : v - (chainId * 2n + 35n);
  if (r !== 0n && r !== 1n) throw new Error('invalid signature v value');
  return Number(r);
}

function pad32(b: Uint8Array): Uint8Array {
  if (b.length === 32) return b;
  if (b.length > 32) throw new Error('invalid signature component');
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}

/** ecrecover on the node's crypto door (the native addon when built): 64-byte public key without 0x04. */
function ecrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  const sig = new Uint8Array(64);
  sig.set(pad32(r), 0);
  sig.set(pad32(s), 32);
  const pub = crypto().recover(sig, recoveryId(v, chainId), msgHash);
  if (!pub) throw new Error('invalid signature');
  return pub.subarray(1);
}

/**
 * @ethereumjs's transaction signing (tx.sign) on the crypto door, as noble's sign answers it: the `recovered` layout
 * (recovery id || r || s); `extraEntropy` true (tx.sign's default) mixes 32 random bytes into the RFC 6979 nonce,
 * bytes mix in those, false or absent is deterministic.
 */
function ecsign(msgHash: Uint8Array, privateKey: Uint8Array, opts?: { extraEntropy?: boolean | Uint8Array }): Uint8Array {
  const extra = opts?.extraEntropy;
  const entropy = extra === undefined || extra === false ? undefined : extra === true ? randomBytes(32) : extra;
  const sig = crypto().sign(msgHash, privateKey, entropy);
  const out = new Uint8Array(65);
  out[0] = sig[64];
  out.set(sig.subarray(0, 64), 1);
  return out;
}

/** Every parameter set the @ethereumjs objects load (VM, EVM, block, transaction), merged per EIP in that order. */
function allParams(): ParamsDict {
  const out: ParamsDict = {};
  for (const set of [paramsVM, paramsEVM, paramsBlock, paramsTx] as ParamsDict[]) {
    for (const [eip, values] of Object.entries(set)) out[eip] = { ...out[eip], ...values };
  }
  return out;
}

/**
 * `params` for the transactions and blocks the node builds on a chainCommon: nothing more to load. Each such
 * object otherwise merges its whole parameter set into the Common again (a JSON copy of every EIP's table,
 * ~0.1-0.4 ms per object; three transactions and a block header per eth_sendTransaction), though chainCommon
 * loads them all once and every copy of a Common shares them.
 */
export const PARAMS_LOADED: ParamsDict = Object.freeze({}) as ParamsDict;

const commons = new Map<string, Common>();

/**
 * Every transaction object copies its Common and calls `updateParams(opts.params)` on the copy, which rebuilds
 * the whole parameter cache even when given nothing to merge (PARAMS_LOADED): ~30 µs per decoded transaction,
 * the largest part of decoding at admission. With no parameter to merge, the rebuilt cache would equal the one
 * the copy already shares, so the rebuild is skipped. An own property, so `copy()` (Object.assign) carries it.
 */
function skipEmptyParamsUpdates(c: Common): void {
  const update = c.updateParams;
  Object.defineProperty(c, 'updateParams', {
    value(this: Common, params: ParamsDict) {
      for (const _ in params) return update.call(this, params);
    },
    enumerable: true,
    writable: true,
  });
}

/**
 * isActivatedEIP as a set lookup: @ethereumjs searches its array of the hardfork's ~90 EIPs, and the interpreter
 * asks for every step and every gas charge (6-7% of executing a block of token transfers). The set follows the
 * array: Common replaces the array whenever the hardfork or the EIPs change, and `copy()` carries the property.
 */
function fastEipLookup(c: Common): void {
  let list: readonly number[] | undefined;
  let set = new Set<number>();
  Object.defineProperty(c, 'isActivatedEIP', {
    value(this: Common, eip: number): boolean {
      const l = (this as unknown as { _activatedEIPsCache: readonly number[] })._activatedEIPsCache;
      if (l !== list) {
        list = l;
        set = new Set(l);
      }
      return set.has(eip);
    },
    enumerable: true,
    writable: true,
  });
}

/** The chain's @ethereumjs Common (chain id, hardfork), with native keccak256 and ecrecover plugged in. */
export function chainCommon(chainId: number, hardfork: string): Common {
  const key = `${chainId}:${hardfork}`;
  let c = commons.get(key);
  if (!c) {
    c = createCustomCommon({ chainId, name: `native-${chainId}` }, Mainnet, {
      hardfork,
      params: allParams(),
      customCrypto: { keccak256: (m) => keccak256(m), ecrecover, ecsign: ecsign as never },
    });
    skipEmptyParamsUpdates(c);
    fastEipLookup(c);
    commons.set(key, c);
  }
  return c;
}

/** EIP-7825's cap on one transaction's gas (osaka on), or null where the hardfork has none. */
export function transactionGasCapOf(common: Common): bigint | null {
  return common.isActivatedEIP(7825) ? common.param('maxTransactionGasLimit') : null;
}
