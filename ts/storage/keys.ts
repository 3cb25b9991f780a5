import { fromHex, u32be, u64be } from '../util/hex.js';

/** RocksDB key layout: one prefix byte per table. */
export const P = {
  block: 0x42, // 'B' + height u64 -> encoded block
  blockHash: 0x48, // 'H' + hash32 -> height u64
  tx: 0x54, // 'T' + txid32 -> height u64 || index u32
  addrTx: 0x41, // 'A' + addr20 + height u64 + index u32 -> '' (history, newest last)
  addrCount: 0x43, // 'C' + addr20 -> u32 tx count
  state: 0x53, // 'S' + state key -> value
  meta: 0x4d, // 'M' + name -> value
  audit: 0x4c, // 'L' + seq u64 -> JSON entry
  receipts: 0x52, // 'R' + height u64 -> RLP list of the block's receipts
  logIndex: 0x49, // 'I' + kind u8 + term (0, 20 or 32 bytes) + height u64 -> '' (EVM log postings, chain/log-index.ts)
  creation: 0x4b, // 'K' + contract addr20 -> height u64 || index u32 (the transaction that created it: receipts' contractAddress)
  verified: 0x56, // 'V' + chain id u32 + addr20 -> JSON verification record (ts/verify/store.ts)
  eventIndex: 0x45, // 'E' + term utf8 + 0x00 + height u64 + tx index u32 + event index u16 -> '' (native events, chain/event-index.ts)
  eventCount: 0x65, // 'e' + term utf8 -> u64 number of postings of the term
} as const;

export const blockKey = (h: number): Buffer => Buffer.concat([Buffer.from([P.block]), u64be(h)]);
export const receiptsKey = (h: number): Buffer => Buffer.concat([Buffer.from([P.receipts]), u64be(h)]);
export const blockHashKey = (hash: string): Buffer => Buffer.concat([Buffer.from([P.blockHash]), fromHex(hash)]);
export const txKey = (txid: string): Buffer => Buffer.concat([Buffer.from([P.tx]), fromHex(txid)]);
export const addrTxKey = (addr: string, h: number, i: number): Buffer =>
  Buffer.concat([Buffer.from([P.addrTx]), fromHex(addr), u64be(h), u32be(i)]);
export const addrTxPrefix = (addr: string): Buffer => Buffer.concat([Buffer.from([P.addrTx]), fromHex(addr)]);
export const addrCountKey = (addr: string): Buffer => Buffer.concat([Buffer.from([P.addrCount]), fromHex(addr)]);
export const stateKey = (k: Buffer): Buffer => Buffer.concat([Buffer.from([P.state]), k]);
/** Postings of one log-index term: kind byte (what the term is) and the term's bytes. */
export const logIndexPrefix = (kind: number, term: Uint8Array): Buffer => Buffer.concat([Buffer.from([P.logIndex, kind]), term]);
export const logIndexKey = (kind: number, term: Uint8Array, h: number): Buffer =>
  Buffer.concat([Buffer.from([P.logIndex, kind]), term, u64be(h)]);
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
