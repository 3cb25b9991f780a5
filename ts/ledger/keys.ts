import { pbkdf2Sync } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { crypto, keccak256 } from '../crypto/index.js';
import { fromHex, to0x, toHex } from '../util/hex.js';

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

export interface KeyPair {
  privateKey: Uint8Array;
  /** 65-byte uncompressed, leading 0x04. */
  publicKey: Uint8Array;
  address: string;
}

/** Address = 0x + last 20 bytes of keccak256 of the 64-byte public key (without the 0x04 prefix). */
export function addressFromPublicKey(pub65: Uint8Array): string {
  return to0x(keccak256(pub65.subarray(1)).subarray(12));
}

export function keyPairFromPrivate(priv: Uint8Array | string): KeyPair {
  const privateKey = typeof priv === 'string' ? fromHex(priv) : priv;
  if (privateKey.length !== 32 || !secp256k1.utils.isValidSecretKey(privateKey)) throw new Error('invalid private key');
  const publicKey = secp256k1.getPublicKey(privateKey, false);
  return { privateKey, publicKey, address: addressFromPublicKey(publicKey) };
}

export function randomKeyPair(): KeyPair {
  return keyPairFromPrivate(secp256k1.utils.randomSecretKey());
}

/**
 * The last mnemonic's m/44'/60'/0'/0 node and the keys derived from it. A dev node derives the ten dev keys
 * twice at start (genesis alloc, dev accounts): the seed's 2048 PBKDF2 rounds and the hardened path cost ~40 ms
 * each time in JS on a quiet core, several times that under load.
 */
let lastMnemonic: { phrase: string; account: HDKey; keys: Map<number, KeyPair> } | undefined;

/** BIP-39 mnemonic -> BIP-32 key at m/44'/60'/0'/0/{index} (the Hardhat/Anvil convention). */
export function keyPairFromMnemonic(mnemonic: string, index = 0): KeyPair {
  const phrase = mnemonic.trim().split(/\s+/).join(' ');
  if (lastMnemonic?.phrase !== phrase) {
    if (!validateMnemonic(phrase, wordlist)) throw new Error('invalid mnemonic');
    // BIP-39's seed (PBKDF2-HMAC-SHA512, salt "mnemonic", no passphrase) by OpenSSL: ~1 ms against ~20-90 in JS.
    const seed = pbkdf2Sync(phrase.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
    lastMnemonic = { phrase, account: HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'/0"), keys: new Map() };
  }
  let pair = lastMnemonic.keys.get(index);
  if (!pair) {
    const child = lastMnemonic.account.deriveChild(index);
    if (!child.privateKey) throw new Error('derivation failed');
    pair = keyPairFromPrivate(child.privateKey);
    lastMnemonic.keys.set(index, pair);
  }
  return pair;
}

/**
 * Compact 64-byte signature over a 32-byte digest (no prehash: the digest is already SHA-256), deterministic
 * (RFC 6979, low-S: the same bytes noble gives), on the node's crypto door: libsecp256k1 when the addon is built
 * (a block signature costs ~0.05 ms there against ~0.5 ms in JS).
 */
export function signDigest(digest32: Uint8Array, privateKey: Uint8Array): Uint8Array {
  return crypto().sign(digest32, privateKey).subarray(0, 64);
}

export const privateKeyHex = (k: KeyPair): string => toHex(k.privateKey);
