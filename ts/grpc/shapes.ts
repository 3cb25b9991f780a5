/**
 * The node's records in native.v1 message shapes (hex strings become bytes, amounts stay bigint). Blocks are
 * immutable, so their encodings are cached per block object: the window's blocks are shared by every reader
 * and stream, and each is encoded once.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { isEvmTransaction } from '../ledger/tx-kind.js';
import type { SignedTransaction } from '../ledger/transaction.js';
import { WEI_PER_BASE } from '../ledger/units.js';
import type { AccountAt, Block } from '../services/index.js';
import { fromHex } from '../util/hex.js';
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

/** GetBalance's answer. */
export function accountMessage(address: string, a: AccountAt): Account {
  return create(AccountSchema, {
    address: addressMessage(address),
    balance: { base: a.balanceWei / WEI_PER_BASE, wei: a.balanceWei.toString() },
    nonce: a.pendingNonce,
    height: { value: BigInt(a.height) },
    committedNonce: a.nonce,
  });
}
