import { RLP } from '@ethereumjs/rlp';
import { crypto, sha256 } from '../crypto/index.js';
import { type SignedTransaction, decodeTransactionFields, transactionFields } from '../ledger/transaction.js';
import { bigToBytes, bytesToBig, fromHex, to0x, toHex } from '../util/hex.js';

export type ConsensusPhase = 'PoA' | 'DPoS+BFT';

export const EMPTY_BLOOM_HEX = '00'.repeat(256);

/** A block as stored and served. Hashes are 64 lowercase hex without 0x (REST convention). */
export interface Block {
  index: number;
  hash: string;
  previous_hash: string;
  timestamp: number;
  tx_count: number;
  validator: string;
  merkle_root: string;
  state_root: string;
  round: number;
  /** EVM gas used by the block (native transactions count no EVM gas). */
  gas_used: bigint;
  /** 2048-bit bloom of the block's EVM logs (512 hex). */
  logs_bloom: string;
  consensus: ConsensusPhase;
  /** Proposer's compact signature over the block hash (128 hex; empty for genesis). */
  signature: string;
  /** Encoded BFT justification (commit certificate); empty under PoA. */
  justification: Uint8Array;
  transactions: SignedTransaction[];
}

export type BlockHeader = Omit<Block, 'hash' | 'signature' | 'justification' | 'transactions' | 'tx_count'> & {
  tx_count: number;
};

/** Canonical header encoding: RLP of the fields in fixed order; hash = SHA-256 of it. */
export function encodeHeader(h: BlockHeader): Uint8Array {
  return RLP.encode([
    bigToBytes(BigInt(h.index)),
    fromHex(h.previous_hash),
    bigToBytes(BigInt(h.timestamp)),
    fromHex(h.validator),
    fromHex(h.merkle_root),
    fromHex(h.state_root),
    bigToBytes(BigInt(h.round)),
    bigToBytes(BigInt(h.tx_count)),
    bigToBytes(h.gas_used),
    Buffer.from(h.consensus, 'utf8'),
    fromHex(h.logs_bloom),
  ]);
}

export const blockHash = (h: BlockHeader): string => toHex(sha256(encodeHeader(h)));

export function txMerkleRoot(txs: readonly SignedTransaction[]): string {
  return toHex(crypto().merkleRoot(txs.map((t) => fromHex(t.txid))));
}

export function headerOf(b: Block): BlockHeader {
  return {
    index: b.index,
    previous_hash: b.previous_hash,
    timestamp: b.timestamp,
    tx_count: b.tx_count,
    validator: b.validator,
    merkle_root: b.merkle_root,
    state_root: b.state_root,
    round: b.round,
    gas_used: b.gas_used,
    logs_bloom: b.logs_bloom,
    consensus: b.consensus,
  };
}

export function encodeBlock(b: Block): Uint8Array {
  return RLP.encode([
    encodeHeader(headerOf(b)),
    b.signature ? fromHex(b.signature) : new Uint8Array(0),
    b.justification,
    b.transactions.map(transactionFields),
  ]);
}

export function decodeBlock(bytes: Uint8Array): Block {
  const [headerRlp, sig, just, txs] = RLP.decode(bytes) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array[][]];
  const f = RLP.decode(headerRlp) as Uint8Array[];
  const header: BlockHeader = {
    index: Number(bytesToBig(f[0])),
    previous_hash: toHex(f[1]),
    timestamp: Number(bytesToBig(f[2])),
    validator: to0x(f[3]),
    merkle_root: toHex(f[4]),
    state_root: toHex(f[5]),
    round: Number(bytesToBig(f[6])),
    tx_count: Number(bytesToBig(f[7])),
    gas_used: bytesToBig(f[8]),
    consensus: Buffer.from(f[9]).toString('utf8') as ConsensusPhase,
    logs_bloom: toHex(f[10]),
  };
  return {
    ...header,
    hash: toHex(sha256(headerRlp)),
    signature: toHex(sig),
    justification: just,
    transactions: txs.map(decodeTransactionFields),
  };
}

/** Hash and transaction ids of an encoded block without decoding its transactions (log queries read many). */
export function decodeBlockRefs(bytes: Uint8Array): { hash: string; txids: Uint8Array[] } {
  const [headerRlp, , , txs] = RLP.decode(bytes) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array[][]];
  return { hash: toHex(sha256(headerRlp)), txids: txs.map((f) => f[0]) };
}

/** REST view of a block: the spec's fields plus state_root and (optionally) the transactions. */
export function blockSummary(b: Block): Record<string, unknown> {
  return {
    index: b.index,
    hash: b.hash,
    previous_hash: b.previous_hash,
    timestamp: b.timestamp,
    tx_count: b.tx_count,
    validator: b.validator,
    merkle_root: b.merkle_root,
    state_root: b.state_root,
    round: b.round,
    has_justification: b.justification.length > 0,
    consensus: b.consensus,
  };
}
