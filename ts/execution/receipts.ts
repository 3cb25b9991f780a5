import { RLP } from '@ethereumjs/rlp';
import { crypto } from '../crypto/index.js';
import { type NativeEvent, eventsFromRlpItem, eventsRlpItem } from '../ledger/index.js';
import { bigToBytes, bytesToBig, rlpIntHex, rlpListHex, rlpStrHex } from '../util/index.js';

export interface LogRecord {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
}

/** What the node stores per transaction (native transfers too: status 1, flat gas, no logs). */
export interface ReceiptRecord {
  status: 0 | 1;
  gasUsed: bigint;
  cumulativeGasUsed: bigint;
  effectiveGasPrice: bigint;
  /** Ethereum tx type (0 legacy, 1 EIP-2930, 2 EIP-1559); native transfers report 0. */
  type: number;
  contractAddress: Uint8Array | null;
  logs: LogRecord[];
  /**
   * Revert data / return value for failed calls (kept for tracing and error messages); for a failed
   * native operation, the UTF-8 reason it failed.
   */
  output: Uint8Array;
  /** Native operation events (modules/kit/events.ts); absent or empty for transfers and EVM transactions. */
  events?: NativeEvent[];
}

export const EMPTY_BLOOM = (): Uint8Array => new Uint8Array(256);

/** Ethereum 2048-bit bloom of a set of logs: each log's address and every topic. */
export function logsBloom(logs: readonly LogRecord[], into: Uint8Array = EMPTY_BLOOM()): Uint8Array {
  const c = crypto();
  for (const l of logs) {
    c.bloomAdd(into, l.address);
    for (const t of l.topics) c.bloomAdd(into, t);
  }
  return into;
}

const encodedLists = new WeakMap<readonly ReceiptRecord[], Uint8Array>();

/** Storage encoding of a block's receipts (remembered per list: the receipts root and the commit both need it). */
export function encodeReceipts(receipts: readonly ReceiptRecord[]): Uint8Array {
  let e = encodedLists.get(receipts);
  if (!e) {
    e = encodeReceiptList(receipts);
    encodedLists.set(receipts, e);
  }
  return e;
}

/**
 * RLP of [status, gasUsed, cumulativeGasUsed, effectiveGasPrice, type, contractAddress, logs, output] per
 * receipt, plus a ninth item, the native events, only when there are some (so receipts without events,
 * and the receipts roots of blocks made before native operations existed, encode as they always did), built as one hex string and decoded once (a test keeps it byte-identical to the library's
 * RLP.encode of the same lists; this runs for every transaction a block holds).
 */
function encodeReceiptList(receipts: readonly ReceiptRecord[]): Uint8Array {
  let body = '';
  for (const r of receipts) body += receiptHex(r);
  return Buffer.from(rlpListHex(body), 'hex');
}

const hexOf = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function receiptHex(r: ReceiptRecord): string {
  let logs = '';
  for (const l of r.logs) {
    let topics = '';
    for (const t of l.topics) topics += rlpStrHex(hexOf(t));
    logs += rlpListHex(rlpStrHex(hexOf(l.address)) + rlpListHex(topics) + rlpStrHex(hexOf(l.data)));
  }
  return rlpListHex(
    rlpStrHex(rlpIntHex(BigInt(r.status))) +
      rlpStrHex(rlpIntHex(r.gasUsed)) +
      rlpStrHex(rlpIntHex(r.cumulativeGasUsed)) +
      rlpStrHex(rlpIntHex(r.effectiveGasPrice)) +
      rlpStrHex(rlpIntHex(BigInt(r.type))) +
      rlpStrHex(r.contractAddress ? hexOf(r.contractAddress) : '') +
      rlpListHex(logs) +
      rlpStrHex(hexOf(r.output)) +
      (r.events?.length ? eventsHex(r.events) : ''),
  );
}

const HEX_BYTE = Array.from({ length: 0x80 }, (_, i) => i.toString(16).padStart(2, '0'));

/** UTF-8 hex of a string: ASCII (amounts, ids, flags: most short event values) by table, the rest by Buffer. */
function utf8Hex(s: string): string {
  let h = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return Buffer.from(s, 'utf8').toString('hex');
    h += HEX_BYTE[c];
  }
  return h;
}

const rlpUtf8 = (s: string): string => rlpStrHex(utf8Hex(s));

/** RLP (hex) of event names, field names and ids (addresses, contracts): they recur in every receipt. */
const recurring = new Map<string, string>();
const MAX_RECURRING = 65_536;
function rlpRecurring(s: string): string {
  let h = recurring.get(s);
  if (h === undefined) {
    h = rlpUtf8(s);
    if (recurring.size >= MAX_RECURRING) recurring.clear();
    recurring.set(s, h);
  }
  return h;
}

function eventsHex(events: readonly NativeEvent[]): string {
  let list = '';
  for (const e of events) {
    let fields = '';
    for (const k in e.fields) {
      const v = e.fields[k];
      fields += rlpListHex(rlpRecurring(k) + (v.length >= 40 ? rlpRecurring(v) : rlpUtf8(v)));
    }
    list += rlpListHex(rlpRecurring(e.type) + rlpListHex(fields));
  }
  return rlpListHex(list);
}

/** The library encoding of the same lists: the reference encodeReceipts must equal (tests). */
export function encodeReceiptsReference(receipts: readonly ReceiptRecord[]): Uint8Array {
  return RLP.encode(
    receipts.map((r) => [
      bigToBytes(BigInt(r.status)),
      bigToBytes(r.gasUsed),
      bigToBytes(r.cumulativeGasUsed),
      bigToBytes(r.effectiveGasPrice),
      bigToBytes(BigInt(r.type)),
      r.contractAddress ?? new Uint8Array(0),
      r.logs.map((l) => [l.address, l.topics, l.data]),
      r.output,
      ...(r.events?.length ? [eventsRlpItem(r.events)] : []),
    ]),
  );
}

export function decodeReceipts(bytes: Uint8Array): ReceiptRecord[] {
  const rows = RLP.decode(bytes) as unknown as Uint8Array[][];
  return rows.map((f) => ({
    status: Number(bytesToBig(f[0])) as 0 | 1,
    gasUsed: bytesToBig(f[1]),
    cumulativeGasUsed: bytesToBig(f[2]),
    effectiveGasPrice: bytesToBig(f[3]),
    type: Number(bytesToBig(f[4])),
    contractAddress: f[5].length ? f[5] : null,
    logs: (f[6] as unknown as [Uint8Array, Uint8Array[], Uint8Array][]).map(([address, topics, data]) => ({
      address,
      topics,
      data,
    })),
    output: f[7] ?? new Uint8Array(0),
    ...(f[8] ? { events: eventsFromRlpItem(f[8]) } : {}),
  }));
}
