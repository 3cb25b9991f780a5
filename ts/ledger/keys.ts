import { createECDH, createHmac, pbkdf2Sync } from 'node:crypto';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { crypto, keccak256 } from '../crypto/index.js';
import { fromHex, to0x, toHex } from '../util/index.js';

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
  const publicKey = new Uint8Array(publicKeyOf(privateKey, false));
  return { privateKey, publicKey, address: addressFromPublicKey(publicKey) };
}

/**
 * The public key of a valid secret key, by OpenSSL: ~0.05 ms. @noble's first getPublicKey builds its
 * precomputed table (~40 ms on a quiet core), which a node's start paid for its validator key and the dev keys.
 */
function publicKeyOf(privateKey: Uint8Array, compressed: boolean): Buffer {
  const ecdh = createECDH('secp256k1');
  ecdh.setPrivateKey(privateKey);
  return ecdh.getPublicKey(null, compressed ? 'compressed' : 'uncompressed');
}

export function randomKeyPair(): KeyPair {
  return keyPairFromPrivate(secp256k1.utils.randomSecretKey());
}

/** The order of secp256k1's group. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HARDENED = 0x80000000;

/** A BIP-32 extended private key. */
interface HdNode {
  key: Buffer;
  chainCode: Buffer;
  /** Its compressed public key, once a non-hardened child needed it. */
  publicKey?: Buffer;
}

/** BIP-32 key material from HMAC-SHA512 output: the left half is the key (or the tweak), the right the chain code. */
function hdNode(i: Buffer, parentKey?: Buffer): HdNode {
  const tweak = BigInt(`0x${i.subarray(0, 32).toString('hex')}`);
  const key = parentKey ? (tweak + BigInt(`0x${parentKey.toString('hex')}`)) % CURVE_ORDER : tweak;
  // Probability below 2^-127; BIP-32 would skip to the next index.
  if (tweak >= CURVE_ORDER || key === 0n) throw new Error('derivation failed');
  return { key: Buffer.from(key.toString(16).padStart(64, '0'), 'hex'), chainCode: i.subarray(32) };
}

/** BIP-32 private child derivation (CKDpriv); index ≥ 2^31 is hardened. */
function hdChild(parent: HdNode, index: number): HdNode {
  const data = Buffer.alloc(37);
  if (index >= HARDENED) parent.key.copy(data, 1);
  else {
    parent.publicKey ??= publicKeyOf(parent.key, true);
    parent.publicKey.copy(data, 0);
  }
  data.writeUInt32BE(index, 33);
  return hdNode(createHmac('sha512', parent.chainCode).update(data).digest(), parent.key);
}

/** m/44'/60'/0'/0 of a BIP-39 mnemonic (no passphrase). */
function ethereumAccountNode(phrase: string): HdNode {
  // BIP-39's seed (PBKDF2-HMAC-SHA512, salt "mnemonic") by OpenSSL: ~1 ms against ~20-90 in JS.
  const seed = pbkdf2Sync(phrase.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
  let node = hdNode(createHmac('sha512', 'Bitcoin seed').update(seed).digest());
  for (const index of [44 + HARDENED, 60 + HARDENED, HARDENED, 0]) node = hdChild(node, index);
  return node;
}

/**
 * The last mnemonic's m/44'/60'/0'/0 node and the keys derived from it: a dev node derives the ten dev keys
 * twice at start (genesis alloc, dev accounts). Seed and derivation by OpenSSL (with @scure/bip32 and @noble,
 * the ten keys cost ~0.1 s of a quiet core, several times that under load).
 */
let lastMnemonic: { phrase: string; account: HdNode; keys: Map<number, KeyPair> } | undefined;

/** BIP-39 mnemonic -> BIP-32 key at m/44'/60'/0'/0/{index} (the Hardhat/Anvil convention). */
export function keyPairFromMnemonic(mnemonic: string, index = 0): KeyPair {
  const phrase = mnemonic.trim().split(/\s+/).join(' ');
  if (lastMnemonic?.phrase !== phrase) {
    if (!validateMnemonic(phrase, wordlist)) throw new Error('invalid mnemonic');
    lastMnemonic = { phrase, account: ethereumAccountNode(phrase), keys: new Map() };
  }
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new Error(`invalid account index ${index}`);
  let pair = lastMnemonic.keys.get(index);
  if (!pair) {
    pair = keyPairFromPrivate(new Uint8Array(hdChild(lastMnemonic.account, index).key));
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
