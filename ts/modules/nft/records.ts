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
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** A bigint u64, written as a number when it is one (every mint writes three: a bigint write costs more). */
function writeBigU64(b: Buffer, at: number, n: bigint): void {
  if (n >= 0n && n <= MAX_SAFE) writeU64(b, at, Number(n));
  else b.writeBigUInt64BE(n, at);
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
  writeBigU64(b, 40, m.maxSupply);
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
  /** Deployment sequence number (the order of GET /nft/collections). */
  index: number;
}

export function encodeCounters(c: CollectionCounters): Buffer {
  const b = Buffer.allocUnsafe(32);
  writeBigU64(b, 0, c.totalMinted);
  writeBigU64(b, 8, c.totalBurned);
  writeBigU64(b, 16, c.autoCursor);
  writeU64(b, 24, c.index);
  return b;
}

export function decodeCounters(b: Buffer): CollectionCounters {
  return {
    totalMinted: b.readBigUInt64BE(0),
    totalBurned: b.readBigUInt64BE(8),
    autoCursor: b.readBigUInt64BE(16),
    index: readU64(b, 24),
  };
}

/** A token: live, or burned (kept so its id is never reused). */
export interface TokenRecord {
  owner: Raw20;
  mintedHeight: number;
  lastTransferHeight: number;
  burned: boolean;
  /** Approved spender, or null. The approval may have expired: see approvalLive. */
  spender: Raw20 | null;
  /** 0 = no expiry; else the last height at which the approval authorizes. */
  expiry: bigint;
  /** Replaces base_uri/{id}; null when none. */
  uri: string | null;
}

const FLAG_BURNED = 1;
const FLAG_APPROVED = 2;
const FLAG_URI = 4;
const TOKEN_FIXED = 65;

// owner 20 | minted 8 | last_transfer 8 | flags 1 | spender 20 | expiry 8 | uri (rest, when FLAG_URI)
export function encodeToken(t: TokenRecord): Buffer {
  const uri = t.uri === null ? null : Buffer.from(t.uri, 'utf8');
  const b = Buffer.allocUnsafe(TOKEN_FIXED + (uri?.length ?? 0));
  b.write(t.owner, 0, 'latin1');
  writeU64(b, 20, t.mintedHeight);
  writeU64(b, 28, t.lastTransferHeight);
  b[36] = (t.burned ? FLAG_BURNED : 0) | (t.spender !== null ? FLAG_APPROVED : 0) | (uri ? FLAG_URI : 0);
  b.write(t.spender ?? NO_ADDRESS, 37, 'latin1');
  writeBigU64(b, 57, t.expiry);
  uri?.copy(b, TOKEN_FIXED);
  return b;
}

export function decodeToken(b: Buffer): TokenRecord {
  const flags = b[36];
  return {
    owner: b.toString('latin1', 0, 20),
    mintedHeight: readU64(b, 20),
    lastTransferHeight: readU64(b, 28),
    burned: (flags & FLAG_BURNED) !== 0,
    spender: flags & FLAG_APPROVED ? b.toString('latin1', 37, 57) : null,
    expiry: b.readBigUInt64BE(57),
    uri: flags & FLAG_URI ? b.toString('utf8', TOKEN_FIXED) : null,
  };
}

/** What the index needs of a token record, read without decoding the rest: owner, burned, approved. */
export const tokenOwner = (b: Buffer): Raw20 => b.toString('latin1', 0, 20);
/** tokenOwner(b) === who, compared in place. */
export function tokenOwnedBy(b: Buffer, who: Raw20): boolean {
  for (let i = 0; i < 20; i++) if (b[i] !== who.charCodeAt(i)) return false;
  return true;
}
export const tokenBurned = (b: Buffer): boolean => (b[36] & FLAG_BURNED) !== 0;
export const tokenApproved = (b: Buffer): boolean => (b[36] & FLAG_APPROVED) !== 0;

/** The approved spender of a record whose approval authorizes at `height`, or null (read in place). */
export function tokenLiveSpender(b: Buffer, height: number): Raw20 | null {
  if (!tokenApproved(b)) return null;
  const expiry = b.readBigUInt64BE(57);
  return expiry === 0n || BigInt(height) <= expiry ? b.toString('latin1', 37, 57) : null;
}

/**
 * The record after a transfer to `owner` at `height` (approval cleared, the rest kept), patched on a
 * copy: the hottest operation skips decoding and re-encoding the URI.
 */
export function transferredToken(b: Buffer, owner: Raw20, height: number): Buffer {
  const t = Buffer.from(b);
  t.write(owner, 0, 'latin1');
  writeU64(t, 28, height);
  t[36] &= ~FLAG_APPROVED;
  t.fill(0, 37, TOKEN_FIXED);
  return t;
}

/**
 * An approval authorizes in the block at `height` while expiry is 0 or height <= expiry; an expired
 * one stays in the record until the token moves or is re-approved, but never authorizes and reads
 * do not show it.
 */
export const approvalLive = (t: TokenRecord, height: number): boolean =>
  t.spender !== null && (t.expiry === 0n || BigInt(height) <= t.expiry);

export const encodeU64 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(8);
  writeU64(b, 0, n);
  return b;
};
export const decodeU64 = (b: Buffer): number => readU64(b, 0);
