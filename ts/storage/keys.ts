import { fromHex, u32be, u64be } from '../util/index.js';

/** RocksDB key layout: one prefix byte per table. */
export const P = {
  block: 0x42, // 'B' + height u64 -> encoded block
  blockHash: 0x48, // 'H' + hash32 -> height u64
  tx: 0x54, // 'T' + txid32 -> height u64 || index u32
  addrTx: 0x41, // 'A' + addr20 + height u64 -> u32 BE indexes of the block's transactions touching addr, ascending (history, newest last)
  addrCount: 0x43, // 'C' + addr20 -> u32 tx count
  state: 0x53, // 'S' + state key -> value
  meta: 0x4d, // 'M' + name -> value
  audit: 0x4c, // 'L' + seq u64 -> JSON entry
  receipts: 0x52, // 'R' + height u64 -> RLP list of the block's receipts
  logIndex: 0x49, // 'I' + kind u8 + term (0, 20 or 32 bytes) + height u64 -> '' (EVM log postings, chain/log-index.ts)
  changeSet: 0x59, // 'Y' + height u64 -> the state keys an indexed block changed, each as length u8 + key (chain/state-history.ts)
  historyIndex: 0x58, // 'X' + key length u8 + state key + height u64 -> the key's value before that block (0x00 absent | 0x01 + value)
  pendingChangeSet: 0x5a, // 'Z' + height u64 -> a block's change set not yet in the history index: keys with previous values (chain/change-set.ts)
  creation: 0x4b, // 'K' + contract addr20 -> height u64 || index u32 (the transaction that created it: receipts' contractAddress)
  verified: 0x56, // 'V' + chain id u32 + addr20 -> JSON verification record (ts/verify/store.ts)
  eventIndex: 0x45, // 'E' + term utf8 + 0x00 + height u64 + tx index u32 + event index u16 -> '' (native events, chain/event-index.ts)
  eventCount: 0x65, // 'e' + term utf8 -> u64 number of postings of the term
  stateIndex: 0x4f, // 'O' + table u8 + ... -> the state index's orderings: rich list, holders, delegations (indexes/state-index-store.ts)
} as const;

/** Big-endian u64 of a safe integer (no BigInt on the commit path). */
function putU64(b: Buffer, n: number, at: number): void {
  b.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at);
  b.writeUInt32BE(n >>> 0, at + 4);
}

/** Prefix byte, then the bytes of a 0x-less or 0x-prefixed hex string of `bytes` bytes, then `extra` bytes. */
function hexKey(prefix: number, hex: string, bytes: number, extra = 0): Buffer {
  const body = hex.charCodeAt(1) === 0x78 ? hex.slice(2) : hex;
  if (body.length !== bytes * 2) throw new Error(`key part must be ${bytes} bytes of hex`);
  const b = Buffer.allocUnsafe(1 + bytes + extra);
  b[0] = prefix;
  if (b.write(body, 1, 'hex') !== bytes) throw new Error('invalid hex in key part');
  return b;
}

function heightKey(prefix: number, h: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  b[0] = prefix;
  putU64(b, h, 1);
  return b;
}

export const blockKey = (h: number): Buffer => heightKey(P.block, h);
export const receiptsKey = (h: number): Buffer => heightKey(P.receipts, h);
export const blockHashKey = (hash: string): Buffer => hexKey(P.blockHash, hash, 32);
export const txKey = (txid: string): Buffer => hexKey(P.tx, txid, 32);
/** An address's posting for one block: one key per address and block, not per transaction. */
export function addrTxKey(addr: string, h: number): Buffer {
  const b = hexKey(P.addrTx, addr, 20, 8);
  putU64(b, h, 21);
  return b;
}
export const addrTxPrefix = (addr: string): Buffer => hexKey(P.addrTx, addr, 20);
export const addrCountKey = (addr: string): Buffer => hexKey(P.addrCount, addr, 20);
export function stateKey(k: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(1 + k.length);
  b[0] = P.state;
  b.set(k, 1);
  return b;
}
/** Postings of one log-index term: kind byte (what the term is) and the term's bytes. */
export const logIndexPrefix = (kind: number, term: Uint8Array): Buffer => Buffer.concat([Buffer.from([P.logIndex, kind]), term]);
export const logIndexKey = (kind: number, term: Uint8Array, h: number): Buffer =>
  Buffer.concat([Buffer.from([P.logIndex, kind]), term, u64be(h)]);
/** An indexed block's change set: the state keys it changed (their previous values are in the history index). */
export const changeSetKey = (h: number): Buffer => heightKey(P.changeSet, h);
/** A block's change set as its commit wrote it (keys and previous values), until the history indexer takes it. */
export const pendingChangeSetKey = (h: number): Buffer => heightKey(P.pendingChangeSet, h);
/** Change sets from height h on start with this (one key per block: the same bytes as changeSetKey). */
export const changeSetPrefix = changeSetKey;
/** The history index of one state key (the length byte keeps one key's entries from prefixing another's). */
export function historyPrefix(stateKey: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(2 + stateKey.length);
  b[0] = P.historyIndex;
  b[1] = stateKey.length;
  b.set(stateKey, 2);
  return b;
}
export function historyKey(stateKey: Uint8Array, h: number): Buffer {
  const b = Buffer.allocUnsafe(10 + stateKey.length);
  b[0] = P.historyIndex;
  b[1] = stateKey.length;
  b.set(stateKey, 2);
  putU64(b, h, 2 + stateKey.length);
  return b;
}
export const creationKey = (addr: string): Buffer => Buffer.concat([Buffer.from([P.creation]), fromHex(addr)]);
export const verifiedPrefix = (chainId: number): Buffer => Buffer.concat([Buffer.from([P.verified]), u32be(chainId)]);
export const verifiedKey = (chainId: number, addr: string): Buffer => Buffer.concat([verifiedPrefix(chainId), fromHex(addr)]);
/** Postings of one native-event index term (terms never contain a NUL byte, which ends them). */
export const eventIndexPrefix = (term: string): Buffer =>
  Buffer.concat([Buffer.from([P.eventIndex]), Buffer.from(term, 'utf8'), Buffer.from([0])]);
/** A posting's key from its term's prefix (built once per term when indexing a block). */
export function eventIndexKeyAt(prefix: Buffer, h: number, tx: number, ev: number): Buffer {
  const k = Buffer.allocUnsafe(prefix.length + 14);
  prefix.copy(k, 0);
  k.writeUInt32BE(Math.floor(h / 2 ** 32), prefix.length);
  k.writeUInt32BE(h >>> 0, prefix.length + 4);
  k.writeUInt32BE(tx, prefix.length + 8);
  k.writeUInt16BE(ev, prefix.length + 12);
  return k;
}
export const eventCountKey = (term: string): Buffer => Buffer.concat([Buffer.from([P.eventCount]), Buffer.from(term, 'utf8')]);
export const metaKey = (name: string): Buffer => Buffer.concat([Buffer.from([P.meta]), Buffer.from(name)]);

/** Exclusive upper bound of all keys starting with prefix. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.alloc(prefix.length + 1, 0xff);
}
