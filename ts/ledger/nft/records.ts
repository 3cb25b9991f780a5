/**
 * Binary layouts of the SRC-721 state values: fixed offsets, integers big-endian, text UTF-8. A value
 * is never modified in place (the state's buffers are shared with overlays): updates encode a new one.
 */
import type { Raw20 } from './keys.js';

const NO_ADDRESS: Raw20 = '\0'.repeat(20);

const readU64 = (b: Buffer, at: number): number => b.readUInt32BE(at) * 2 ** 32 + b.readUInt32BE(at + 4);
function writeU64(b: Buffer, at: number, n: number): void {
  b.writeUInt32BE(Math.floor(n / 2 ** 32), at);
  b.writeUInt32BE(n >>> 0, at + 4);
}

/** A collection's fixed fields (changed only by a freeze or a base-URI update). */
export interface CollectionMeta {
  deployer: Raw20;
  royaltyRecipient: Raw20;
  /** 0 = unlimited. */
  maxSupply: bigint;
  createdHeight: number;
  royaltyBps: number;
  frozen: boolean;
  name: string;
  symbol: string;
  baseUri: string;
}

// deployer 20 | royalty_recipient 20 | max_supply 8 | created_height 8 | royalty_bps 2 | frozen 1 |
// name_len 1 | name | symbol_len 1 | symbol | base_uri (rest)
export function encodeMeta(m: CollectionMeta): Buffer {
  const name = Buffer.from(m.name, 'utf8');
  const symbol = Buffer.from(m.symbol, 'utf8');
  const uri = Buffer.from(m.baseUri, 'utf8');
  const b = Buffer.allocUnsafe(61 + name.length + symbol.length + uri.length);
  b.write(m.deployer, 0, 'latin1');
  b.write(m.royaltyRecipient, 20, 'latin1');
  b.writeBigUInt64BE(m.maxSupply, 40);
  writeU64(b, 48, m.createdHeight);
  b.writeUInt16BE(m.royaltyBps, 56);
  b[58] = m.frozen ? 1 : 0;
  b[59] = name.length;
  name.copy(b, 60);
  let o = 60 + name.length;
  b[o] = symbol.length;
  symbol.copy(b, o + 1);
  o += 1 + symbol.length;
  uri.copy(b, o);
  return b;
}

export function decodeMeta(b: Buffer): CollectionMeta {
  const nameEnd = 60 + b[59];
  const symbolEnd = nameEnd + 1 + b[nameEnd];
  return {
    deployer: b.toString('latin1', 0, 20),
    royaltyRecipient: b.toString('latin1', 20, 40),
    maxSupply: b.readBigUInt64BE(40),
    createdHeight: readU64(b, 48),
    royaltyBps: b.readUInt16BE(56),
    frozen: b[58] === 1,
    name: b.toString('utf8', 60, nameEnd),
    symbol: b.toString('utf8', nameEnd + 1, symbolEnd),
    baseUri: b.toString('utf8', symbolEnd),
  };
}

/** The fields a mint checks, read without decoding the text. */
export const metaDeployer = (b: Buffer): Raw20 => b.toString('latin1', 0, 20);
export const metaMaxSupply = (b: Buffer): bigint => b.readBigUInt64BE(40);
export const metaFrozen = (b: Buffer): boolean => b[58] === 1;

/** A collection's counters (every mint and burn changes them). */
export interface CollectionCounters {
  totalMinted: bigint;
  totalBurned: bigint;
  /** Every id from the last automatic allocation's start up to cursor - 1 is taken (see allocateId). */
  autoCursor: bigint;
  /** Addresses holding at least one token. */
  holders: number;
  /** Position in the list of all collections. */
  index: number;
}

export function encodeCounters(c: CollectionCounters): Buffer {
  const b = Buffer.allocUnsafe(40);
  b.writeBigUInt64BE(c.totalMinted, 0);
  b.writeBigUInt64BE(c.totalBurned, 8);
  b.writeBigUInt64BE(c.autoCursor, 16);
  writeU64(b, 24, c.holders);
  writeU64(b, 32, c.index);
  return b;
}

export function decodeCounters(b: Buffer): CollectionCounters {
  return {
    totalMinted: b.readBigUInt64BE(0),
    totalBurned: b.readBigUInt64BE(8),
    autoCursor: b.readBigUInt64BE(16),
    holders: readU64(b, 24),
    index: readU64(b, 32),
  };
}

/** A token: live, or burned (kept so its id is never reused). */
export interface TokenRecord {
  owner: Raw20;
  mintedHeight: number;
  lastTransferHeight: number;
  /** Position in the owner's token list and in the collection's token list. */
  ownerPos: number;
  collectionPos: number;
  burned: boolean;
  /** Approved spender, or null. The approval may have expired: see approvalLive. */
  spender: Raw20 | null;
  /** 0 = no expiry; else the last height at which the approval authorizes. */
  expiry: bigint;
  /** Position in the owner's approval list (when spender is set). */
  approvalPos: number;
  /** Replaces base_uri/{id}; null when none. */
  uri: string | null;
}

const FLAG_BURNED = 1;
const FLAG_APPROVED = 2;
const FLAG_URI = 4;

// owner 20 | minted 8 | last_transfer 8 | owner_pos 8 | collection_pos 8 | flags 1 | spender 20 |
// expiry 8 | approval_pos 8 | uri (rest, when FLAG_URI)
export function encodeToken(t: TokenRecord): Buffer {
  const uri = t.uri === null ? null : Buffer.from(t.uri, 'utf8');
  const b = Buffer.allocUnsafe(89 + (uri?.length ?? 0));
  b.write(t.owner, 0, 'latin1');
  writeU64(b, 20, t.mintedHeight);
  writeU64(b, 28, t.lastTransferHeight);
  writeU64(b, 36, t.ownerPos);
  writeU64(b, 44, t.collectionPos);
  b[52] = (t.burned ? FLAG_BURNED : 0) | (t.spender !== null ? FLAG_APPROVED : 0) | (uri ? FLAG_URI : 0);
  b.write(t.spender ?? NO_ADDRESS, 53, 'latin1');
  b.writeBigUInt64BE(t.expiry, 73);
  writeU64(b, 81, t.approvalPos);
  uri?.copy(b, 89);
  return b;
}

export function decodeToken(b: Buffer): TokenRecord {
  const flags = b[52];
  return {
    owner: b.toString('latin1', 0, 20),
    mintedHeight: readU64(b, 20),
    lastTransferHeight: readU64(b, 28),
    ownerPos: readU64(b, 36),
    collectionPos: readU64(b, 44),
    burned: (flags & FLAG_BURNED) !== 0,
    spender: flags & FLAG_APPROVED ? b.toString('latin1', 53, 73) : null,
    expiry: b.readBigUInt64BE(73),
    approvalPos: readU64(b, 81),
    uri: flags & FLAG_URI ? b.toString('utf8', 89) : null,
  };
}

/** A copy of a token record with one list position changed (the slot that moved into a hole). */
export function withTokenPosition(b: Buffer, list: 'owner' | 'collection' | 'approval', pos: number): Buffer {
  const copy = Buffer.from(b);
  writeU64(copy, list === 'owner' ? 36 : list === 'collection' ? 44 : 81, pos);
  return copy;
}

/**
 * An approval authorizes in the block at `height` while expiry is 0 or height <= expiry; an expired
 * one stays in the record until the token moves or is re-approved, but never authorizes and reads
 * do not show it.
 */
export const approvalLive = (t: TokenRecord, height: number): boolean =>
  t.spender !== null && (t.expiry === 0n || BigInt(height) <= t.expiry);

/** What an address holds in one collection, and where it is in the holder and owner-collection lists. */
export interface Holding {
  count: number;
  holderPos: number;
  ownerCollectionPos: number;
}

export function encodeHolding(h: Holding): Buffer {
  const b = Buffer.allocUnsafe(24);
  writeU64(b, 0, h.count);
  writeU64(b, 8, h.holderPos);
  writeU64(b, 16, h.ownerCollectionPos);
  return b;
}

export function decodeHolding(b: Buffer): Holding {
  return { count: readU64(b, 0), holderPos: readU64(b, 8), ownerCollectionPos: readU64(b, 16) };
}

export const withHoldingPosition = (b: Buffer, list: 'holder' | 'ownerCollection', pos: number): Buffer => {
  const copy = Buffer.from(b);
  writeU64(copy, list === 'holder' ? 8 : 16, pos);
  return copy;
};

/** Sizes of an address's lists. */
export interface OwnerCounts {
  tokens: number;
  collections: number;
  approvals: number;
  operators: number;
}

export const EMPTY_COUNTS: Readonly<OwnerCounts> = { tokens: 0, collections: 0, approvals: 0, operators: 0 };

export function encodeCounts(c: OwnerCounts): Buffer {
  const b = Buffer.allocUnsafe(32);
  writeU64(b, 0, c.tokens);
  writeU64(b, 8, c.collections);
  writeU64(b, 16, c.approvals);
  writeU64(b, 24, c.operators);
  return b;
}

export function decodeCounts(b: Buffer): OwnerCounts {
  return { tokens: readU64(b, 0), collections: readU64(b, 8), approvals: readU64(b, 16), operators: readU64(b, 24) };
}

export const encodeU64 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(8);
  writeU64(b, 0, n);
  return b;
};
export const decodeU64 = (b: Buffer): number => readU64(b, 0);

/** A list slot holding a collection and a token id (owner tokens, owner approvals). */
export function encodeTokenRef(c: Raw20, id: bigint): Buffer {
  const b = Buffer.allocUnsafe(28);
  b.write(c, 0, 'latin1');
  b.writeBigUInt64BE(id, 20);
  return b;
}

export const decodeTokenRef = (b: Buffer): { collection: Raw20; id: bigint } => ({
  collection: b.toString('latin1', 0, 20),
  id: b.readBigUInt64BE(20),
});
