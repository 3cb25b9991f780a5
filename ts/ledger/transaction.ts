import {
  checkRlp,
  decodeRlp,
  InvalidTransactionError,
  bigToBytes,
  bytesToBig,
  isAddress,
  isHash,
  normHash,
  to0x,
  toHex,
  asUint,
  rlpIntHex,
  rlpListHex,
  rlpStrHex,
  objectMemo,
} from '../util/index.js';
import { sha256 } from '../crypto/index.js';
import { type KeyPair, signDigest } from './keys.js';
import { MAX_U64 } from '../modules/index.js';

/** The spec's SignedTransaction, with exact integer fields. txid is kept as 64 lowercase hex. */
export interface SignedTransaction {
  txid: string;
  from_address: string;
  to_address: string;
  amount: bigint;
  fee: bigint;
  nonce: bigint;
  data: string;
  timestamp: number;
  chain_id: number;
  signature: string;
  public_key: string;
}

export interface UnsignedTransfer {
  from: string;
  to: string;
  amount: bigint;
  fee: bigint;
  nonce: bigint;
  data?: string;
  timestamp?: number;
  chain_id: number;
}

/**
 * Signing payload: the 8 keys sorted, compact JSON, integers written exactly.
 * Built by hand (not JSON.stringify of an object) so bigint amounts stay exact and key order is fixed.
 */
export function signingPayload(tx: {
  amount: bigint;
  chain_id: number;
  data: string;
  fee: bigint;
  from_address: string;
  nonce: bigint;
  timestamp: number;
  to_address: string;
}): string {
  return (
    `{"amount":${tx.amount},"chain_id":${tx.chain_id},"data":${JSON.stringify(tx.data)},"fee":${tx.fee},` +
    `"from":${JSON.stringify(tx.from_address)},"nonce":${tx.nonce},"timestamp":${tx.timestamp},` +
    `"to":${JSON.stringify(tx.to_address)}}`
  );
}

export function signingDigest(tx: Parameters<typeof signingPayload>[0]): Uint8Array {
  return sha256(Buffer.from(signingPayload(tx), 'utf8'));
}

/** Build and sign a transaction (wallet, tests, benches). */
export function signTransaction(u: UnsignedTransfer, key: KeyPair): SignedTransaction {
  const body = {
    from_address: u.from.toLowerCase(),
    to_address: u.to.toLowerCase(),
    amount: u.amount,
    fee: u.fee,
    nonce: u.nonce,
    data: u.data ?? '',
    timestamp: u.timestamp ?? Math.floor(Date.now() / 1000),
    chain_id: u.chain_id,
  };
  const digest = signingDigest(body);
  return {
    ...body,
    txid: toHex(digest),
    signature: toHex(signDigest(digest, key.privateKey)),
    public_key: toHex(key.publicKey),
  };
}

const FIELDS = [
  'txid',
  'from_address',
  'to_address',
  'amount',
  'fee',
  'nonce',
  'data',
  'timestamp',
  'chain_id',
  'signature',
  'public_key',
] as const;

/** The submitted JSON is not a well-formed SignedTransaction (JSON-RPC maps it to -32602). */
export class TransactionShapeError extends InvalidTransactionError {}

const badShape = (msg: string): TransactionShapeError => new TransactionShapeError(`Invalid transaction: ${msg}`);

/** Shape check of an untrusted JSON transaction (from parseJsonExact). Throws InvalidTransactionError. */
export function parseSignedTransaction(raw: unknown): SignedTransaction {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badShape('transaction must be an object');
  const o = raw as Record<string, unknown>;
  for (const f of FIELDS) if (!(f in o)) throw badShape(`missing field ${f}`);
  const uint = (f: string, max = MAX_U64): bigint => {
    const v = asUint(o[f], max);
    if (v === undefined) throw badShape(`${f} must be a non-negative integer not above ${max}`);
    return v;
  };
  const str = (f: string): string => {
    if (typeof o[f] !== 'string') throw badShape(`${f} must be a string`);
    return o[f] as string;
  };
  const from = str('from_address');
  const to = str('to_address');
  if (!isAddress(from)) throw badShape('from_address must be 0x + 40 hex');
  if (!isAddress(to)) throw badShape('to_address must be 0x + 40 hex');
  const txid = str('txid');
  if (!isHash(txid)) throw badShape('txid must be 64 hex');
  const signature = str('signature');
  const publicKey = str('public_key');
  if (!/^[0-9a-fA-F]{128}$/.test(signature)) throw badShape('signature must be 128 hex (compact ECDSA)');
  if (!/^04[0-9a-fA-F]{128}$/.test(publicKey)) throw badShape('public_key must be 130 hex (uncompressed, leading 04)');
  const data = str('data');
  if (data.length > 64 * 1024) throw badShape('data too large');
  return {
    txid: normHash(txid),
    from_address: from,
    to_address: to,
    amount: uint('amount'),
    fee: uint('fee'),
    nonce: uint('nonce'),
    data,
    timestamp: Number(uint('timestamp', 0xffffffffffn)),
    chain_id: Number(uint('chain_id', 0xffffffffn)),
    signature: signature.toLowerCase(),
    public_key: publicKey.toLowerCase(),
  };
}

/**
 * Storage (and wire) encoding: one type byte, then the RLP list of the 11 fields in fixed order
 * (addresses and hashes as raw bytes). 0x01 = native transaction, 0x02 = EVM transaction (signature =
 * the raw signed Ethereum bytes, public_key empty). Records written before the type byte existed are a
 * bare RLP list (first byte >= 0xc0) and still decode. The block's transactions root hashes these exact
 * bytes, so a block hash fixes every signature and every raw EVM byte.
 */
export const TX_TYPE_NATIVE = 0x01;
export const TX_TYPE_EVM = 0x02;

const encoded = objectMemo<SignedTransaction, Uint8Array>('typed encoding');

export function encodeTransaction(tx: SignedTransaction): Uint8Array {
  let e = encoded.get(tx);
  if (!e) {
    e = encodeTyped(tx);
    encoded.set(tx, e);
  }
  return e;
}

/**
 * The typed encoding, built as one hex string and decoded once. Byte-identical to
 * `type || RLP.encode(transactionFields(tx))` (a test keeps them equal) at about half the cost, which
 * matters because it runs once per transaction on the block-production path.
 */
function encodeTyped(tx: SignedTransaction): Buffer {
  const strip = (h: string): string => (h.startsWith('0x') ? h.slice(2) : h);
  const body =
    rlpStrHex(tx.txid) +
    rlpStrHex(strip(tx.from_address)) +
    rlpStrHex(strip(tx.to_address)) +
    rlpStrHex(rlpIntHex(tx.amount)) +
    rlpStrHex(rlpIntHex(tx.fee)) +
    rlpStrHex(rlpIntHex(tx.nonce)) +
    rlpStrHex(tx.data === '' ? '' : Buffer.from(tx.data, 'utf8').toString('hex')) +
    rlpStrHex(rlpIntHex(tx.timestamp)) +
    rlpStrHex(rlpIntHex(tx.chain_id)) +
    rlpStrHex(tx.signature) +
    rlpStrHex(tx.public_key);
  const type = tx.public_key === '' ? '02' : '01';
  return Buffer.from(type + rlpListHex(body), 'hex');
}

const hexBytes = (hex: string): Buffer => Buffer.from(hex.startsWith('0x') ? hex.slice(2) : hex, 'hex');

/** The RLP field list of a transaction (version-0 block bodies; the reference for encodeTransaction). */
export function transactionFields(tx: SignedTransaction): Uint8Array[] {
  return [
    hexBytes(tx.txid),
    hexBytes(tx.from_address),
    hexBytes(tx.to_address),
    bigToBytes(tx.amount),
    bigToBytes(tx.fee),
    bigToBytes(tx.nonce),
    Buffer.from(tx.data, 'utf8'),
    bigToBytes(BigInt(tx.timestamp)),
    bigToBytes(BigInt(tx.chain_id)),
    hexBytes(tx.signature),
    hexBytes(tx.public_key),
  ];
}

/** Decode a stored transaction (typed form, or the legacy bare RLP list). Throws on malformed bytes. */
export function decodeTransaction(bytes: Uint8Array): SignedTransaction {
  if (bytes.length === 0) throw new Error('empty transaction encoding');
  if (bytes[0] >= 0xc0) return decodeTransactionFields(decodeRlp(bytes) as Uint8Array[]);
  if (bytes[0] !== TX_TYPE_NATIVE && bytes[0] !== TX_TYPE_EVM)
    throw new Error(`unknown transaction type 0x${bytes[0].toString(16)}`);
  const f = decodeRlp(bytes.subarray(1));
  if (!Array.isArray(f) || f.length !== 11 || f.some((x) => !(x instanceof Uint8Array)))
    throw new Error('malformed transaction fields');
  const tx = decodeTransactionFields(f as Uint8Array[]);
  if ((bytes[0] === TX_TYPE_EVM) !== (tx.public_key === '')) throw new Error('transaction type byte does not match its fields');
  // The raw EVM transaction (the signature field) is decoded later by @ethereumjs/tx, whose RLP decoder
  // copies the input at every level: its nesting is bounded here first (docs/p2p.md, "Decoding").
  const raw = (f as Uint8Array[])[9];
  if (bytes[0] === TX_TYPE_EVM) checkRlp(raw[0] >= 0xc0 ? raw : raw.subarray(1));
  encoded.set(tx, bytes);
  return tx;
}

export function decodeTransactionFields(f: Uint8Array[]): SignedTransaction {
  return {
    txid: toHex(f[0]),
    from_address: to0x(f[1]),
    to_address: to0x(f[2]),
    amount: bytesToBig(f[3]),
    fee: bytesToBig(f[4]),
    nonce: bytesToBig(f[5]),
    data: Buffer.from(f[6]).toString('utf8'),
    timestamp: Number(bytesToBig(f[7])),
    chain_id: Number(bytesToBig(f[8])),
    signature: toHex(f[9]),
    public_key: toHex(f[10]),
  };
}

/** JSON view of a transaction (REST/RPC): integers stay bigint for exact serialization. */
export function transactionJson(tx: SignedTransaction): Record<string, unknown> {
  return { ...tx };
}
