/**
 * SRC-721 state keys (Cosmos `types/keys.go`). Every key starts with NFT_NS.nft, then a table tag; addresses (collections, owners,
 * operators) are their 20 raw bytes and integers 8 bytes big-endian. Inside the module an address is
 * held as its 20 bytes in a latin1 string (`Raw20`), the form state keys are made of, and turned into
 * `0x…` / `SRC721_…` text only for events and reads.
 *
 * The state holds the records of the data model only (collections, tokens with their approval,
 * operator approvals): a mint writes three keys (token, collection counters, the sender's account) and
 * a transfer two. The lists the reads page through (an owner's tokens, a collection's holders, ...)
 * are an index derived from these records (nft-index.ts), kept beside the state, not inside it.
 */
import { keccak256 } from '../../crypto/index.js';
import type { KeyStr } from '../../state/index.js';

/** The namespace byte of SRC-721 state (inside the state root); the table tag is the second byte. */
export const NFT_NS = { nft: 0x07 } as const;

/** An address (collection, owner, operator) as its 20 raw bytes in a latin1 string. */
export type Raw20 = string;

/** Table tags (second byte of every NFT state key). */
export const TAG = {
  /** collection -> its fixed fields (deployer, royalty, max supply, frozen, name, symbol, base URI). */
  meta: 0x01,
  /** collection -> counters (minted, burned, automatic id cursor, deployment sequence number). */
  counters: 0x02,
  /** collection, token id -> token record (owner, heights, approval, URI override; burned ones kept). */
  token: 0x03,
  /** collection, owner, operator -> present while the operator is approved for all of owner's tokens. */
  operator: 0x04,
  /** -> number of collections deployed (the next deployment sequence number). */
  collectionCount: 0x05,
} as const;

const PREFIX = String.fromCharCode(NFT_NS.nft);

/** Whether a state key is an SRC-721 record. */
export const isNftKey = (k: KeyStr): boolean => k.charCodeAt(0) === NFT_NS.nft;
const tag = (t: number): string => PREFIX + String.fromCharCode(t);
const T = Object.fromEntries(Object.entries(TAG).map(([k, v]) => [k, tag(v)])) as Record<keyof typeof TAG, string>;

const scratch = Buffer.alloc(8);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/**
 * 8-byte big-endian latin1 string of a u64. Every token key is built with one: bigint ids up to 2^53
 * (all of them in practice) are cut into bytes as a number, without a bigint buffer write and a buffer
 * decode.
 */
export function u64s(n: bigint | number): string {
  if (typeof n === 'bigint') {
    if (n >= 0n && n <= MAX_SAFE) {
      const x = Number(n);
      const hi = Math.floor(x / 2 ** 32);
      const lo = x >>> 0;
      return String.fromCharCode(
        hi >>> 24,
        (hi >>> 16) & 0xff,
        (hi >>> 8) & 0xff,
        hi & 0xff,
        lo >>> 24,
        (lo >>> 16) & 0xff,
        (lo >>> 8) & 0xff,
        lo & 0xff,
      );
    }
    scratch.writeBigUInt64BE(n);
  } else {
    scratch.writeUInt32BE(Math.floor(n / 2 ** 32), 0);
    scratch.writeUInt32BE(n >>> 0, 4);
  }
  return scratch.toString('latin1');
}

/** Per-collection keys, kept flat and hashed (every mint reads and writes them); emptied when full. */
function perCollection(prefix: string): (c: Raw20) => KeyStr {
  const keys = new Map<Raw20, KeyStr>();
  return (c) => {
    let k = keys.get(c);
    if (k === undefined) {
      if (keys.size >= 65_536) keys.clear();
      keys.set(c, (k = prefix + c));
    }
    return k;
  };
}
export const metaKey = perCollection(T.meta);
export const countersKey = perCollection(T.counters);
export const tokenKey = (c: Raw20, id: bigint): KeyStr => T.token + c + u64s(id);
export const operatorKey = (c: Raw20, owner: Raw20, operator: Raw20): KeyStr => T.operator + c + owner + operator;
export const COLLECTION_COUNT_KEY: KeyStr = T.collectionCount;

export const COLLECTION_PREFIX = 'SRC721_';

/** `0x…` (any case) -> Raw20. */
export const rawAddress = (hex: string): Raw20 => Buffer.from(hex.slice(2), 'hex').toString('latin1');
/** `SRC721_…` (any case) -> Raw20. */
export const rawCollection = (c: string): Raw20 => Buffer.from(c.slice(COLLECTION_PREFIX.length), 'hex').toString('latin1');
/** Raw20 -> lowercase `0x…`. */
export const addressText = (raw: Raw20): string => `0x${Buffer.from(raw, 'latin1').toString('hex')}`;
/** Raw20 -> `SRC721_` + lowercase hex. */
export const collectionText = (raw: Raw20): string => COLLECTION_PREFIX + Buffer.from(raw, 'latin1').toString('hex');

/**
 * The address of the collection `deployer` creates with the transaction of nonce `nonce`:
 * `SRC721_` + the last 20 bytes of keccak256("SRC721" || deployer (20 bytes) || nonce (8 bytes BE)).
 * A nonce is used once per account, so addresses never repeat; the domain tag keeps them apart from
 * the EVM's CREATE addresses of the same account.
 */
export function collectionAddress(deployer: string, nonce: bigint): string {
  const pre = Buffer.alloc(6 + 20 + 8);
  pre.write('SRC721', 0, 'ascii');
  pre.write(deployer.slice(2), 6, 'hex');
  pre.writeBigUInt64BE(nonce, 26);
  return COLLECTION_PREFIX + Buffer.from(keccak256(pre).subarray(12)).toString('hex');
}
