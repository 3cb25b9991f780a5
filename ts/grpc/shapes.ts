/**
 * The node's records in native.v1 message shapes (hex strings become bytes, amounts stay bigint). Blocks are
 * immutable, so their encodings are cached per block object: the window's blocks are shared by every reader
 * and stream, and each is encoded once.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { isEvmTransaction, type SignedTransaction, weiToBase } from '../ledger/index.js';
import type { AccountAt, Block } from '../services/index.js';
import { fromHex } from '../util/index.js';
import {
  type Account,
  AccountSchema,
  type Address,
  type Block as BlockMessage,
  BlockSchema,
  type ChainEvent,
  ChainEventSchema,
  type Hash,
  type Transaction,
  TransactionSchema,
} from './gen/native/v1/native_pb.js';

const EMPTY = new Uint8Array(0);

export const hashMessage = (hex: string): Hash | undefined =>
  hex === '' ? undefined : { $typeName: 'native.v1.Hash', value: fromHex(hex) };

export const addressMessage = (hex0x: string): Address => ({ $typeName: 'native.v1.Address', value: fromHex(hex0x) });

/** A stored transaction as a Transaction message (EVM ones carry their raw bytes in `raw`). */
export function transactionMessage(tx: SignedTransaction): Transaction {
  const evm = isEvmTransaction(tx);
  return create(TransactionSchema, {
    txid: hashMessage(tx.txid),
    from: addressMessage(tx.from_address),
    to: addressMessage(tx.to_address),
    amount: { base: tx.amount },
    fee: { base: tx.fee },
    nonce: tx.nonce,
    data: tx.data,
    timestamp: BigInt(tx.timestamp),
    chainId: tx.chain_id,
    signature: evm ? EMPTY : fromHex(tx.signature),
    publicKey: evm ? EMPTY : fromHex(tx.public_key),
    raw: evm ? fromHex(tx.signature) : EMPTY,
  });
}

/** A block as a Block message; `withTransactions` false leaves the list empty (tx_count still says how many). */
export function blockMessage(b: Block, withTransactions = true): BlockMessage {
  return create(BlockSchema, {
    index: BigInt(b.index),
    hash: hashMessage(b.hash),
    parentHash: hashMessage(b.previous_hash),
    stateRoot: hashMessage(b.state_root),
    timestamp: BigInt(b.timestamp),
    proposer: addressMessage(b.validator),
    round: b.round,
    transactions: withTransactions ? b.transactions.map(transactionMessage) : [],
    justification: b.justification,
    txCount: b.tx_count,
    transactionsRoot: hashMessage(b.merkle_root),
    receiptsRoot: hashMessage(b.receipts_root),
    gasUsed: b.gas_used,
    consensus: b.consensus,
    signature: b.signature === '' ? EMPTY : fromHex(b.signature),
    logsBloom: fromHex(b.logs_bloom),
    version: b.version,
  });
}

/** A view of an encoding as a Buffer (what both transports write), without a copy. */
export const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

const encodedBlocks = new WeakMap<Block, Uint8Array>();

/** The Block message's encoding (GetBlock's answer), once per block object. */
export function encodeBlock(b: Block): Uint8Array {
  let e = encodedBlocks.get(b);
  if (!e) {
    e = asBuffer(toBinary(BlockSchema, blockMessage(b)));
    encodedBlocks.set(b, e);
  }
  return e;
}

const encodedFinalized = new WeakMap<Block, Uint8Array>();
const encodedFinalizedHeaders = new WeakMap<Block, Uint8Array>();

/** ChainEvent{block_finalized, sequence = height}, encoded once per block object and shape for every stream. */
export function encodeBlockFinalized(b: Block, withTransactions: boolean): Uint8Array {
  const cache = withTransactions ? encodedFinalized : encodedFinalizedHeaders;
  let e = cache.get(b);
  if (!e) {
    const event: ChainEvent = create(ChainEventSchema, {
      event: { case: 'blockFinalized', value: { block: blockMessage(b, withTransactions) } },
      sequence: BigInt(b.index),
    });
    e = asBuffer(toBinary(ChainEventSchema, event));
    cache.set(b, e);
  }
  return e;
}

/** GetBalance's answer (the schema's shape; encodeAccountAnswer writes its encoding directly). */
export function accountMessage(address: string, a: AccountAt): Account {
  return create(AccountSchema, {
    address: addressMessage(address),
    balance: { base: weiToBase(a.balanceWei), wei: a.balanceWei.toString() },
    nonce: a.pendingNonce,
    height: { value: BigInt(a.height) },
    committedNonce: a.nonce,
  });
}

const MAX_UINT64 = (1n << 64n) - 1n;
/** Largest encoding encodeAccountAnswer writes: address 22, balance 2 + 11 + 2 + 78 digits, nonces 11 each, height 13. */
const ACCOUNT_SCRATCH = Buffer.alloc(256);

/** A uint64 as a protobuf varint at `pos`; returns the position after it. */
function putVarint(buf: Buffer, pos: number, value: bigint): number {
  if (value <= 0xffff_ffffn) {
    let n = Number(value);
    while (n > 0x7f) {
      buf[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[pos++] = n;
    return pos;
  }
  let v = value;
  while (v > 0x7fn) {
    buf[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  buf[pos++] = Number(v);
  return pos;
}

/**
 * GetBalance's answer, encoded: exactly the bytes of toBinary(AccountSchema, accountMessage(address, a))
 * (test/grpc/account-encoding.test.ts compares them), written without building the message. protobuf-es
 * encodes by reflection, which cost more than the whole state read; GetBalance's answer changes with every
 * read, so it cannot be cached like a block's. Values out of the wire's range take the schema's path (and
 * its error).
 */
export function encodeAccountAnswer(address: Uint8Array, a: AccountAt): Uint8Array {
  const base = weiToBase(a.balanceWei);
  if (
    address.length !== 20 ||
    a.balanceWei < 0n ||
    base > MAX_UINT64 ||
    a.pendingNonce < 0n ||
    a.pendingNonce > MAX_UINT64 ||
    a.nonce < 0n ||
    a.nonce > MAX_UINT64 ||
    !Number.isSafeInteger(a.height) ||
    a.height < 0
  ) {
    return toBinary(AccountSchema, accountMessage(`0x${Buffer.from(address).toString('hex')}`, a));
  }
  const buf = ACCOUNT_SCRATCH;
  let pos = 0;
  // 1: address { 1: value }
  buf[pos++] = 0x0a;
  buf[pos++] = 22;
  buf[pos++] = 0x0a;
  buf[pos++] = 20;
  buf.set(address, pos);
  pos += 20;
  // 2: balance { 1: base (omitted when 0), 2: wei } — under 128 bytes, so a one-byte length.
  buf[pos++] = 0x12;
  const amountLength = pos++;
  if (base !== 0n) {
    buf[pos++] = 0x08;
    pos = putVarint(buf, pos, base);
  }
  const wei = a.balanceWei.toString();
  buf[pos++] = 0x12;
  buf[pos++] = wei.length;
  pos += buf.write(wei, pos, 'latin1');
  buf[amountLength] = pos - amountLength - 1;
  // 3: nonce (pending)
  if (a.pendingNonce !== 0n) {
    buf[pos++] = 0x18;
    pos = putVarint(buf, pos, a.pendingNonce);
  }
  // 6: height { 1: value }
  buf[pos++] = 0x32;
  const heightLength = pos++;
  if (a.height !== 0) {
    buf[pos++] = 0x08;
    pos = putVarint(buf, pos, BigInt(a.height));
  }
  buf[heightLength] = pos - heightLength - 1;
  // 7: committed_nonce
  if (a.nonce !== 0n) {
    buf[pos++] = 0x38;
    pos = putVarint(buf, pos, a.nonce);
  }
  return Buffer.from(buf.subarray(0, pos));
}
