import { RLP } from '@ethereumjs/rlp';
import {
  decodeRlp,
  bigToBytes,
  bytesToBig,
  fromHex,
  to0x,
  toHex,
  rlpBytesList,
  rlpIntHex,
  rlpListHex,
  rlpStrHex,
} from '../util/index.js';
import { crypto, sha256 } from '../crypto/index.js';
import {
  type SignedTransaction,
  decodeTransaction,
  decodeTransactionFields,
  encodeTransaction,
  transactionFields,
} from '../ledger/index.js';

/** `DPoS` is the stake-weighted phase before BFT finality runs (fewer than 4 validators, or no BFT engine). */
export type ConsensusPhase = 'PoA' | 'DPoS' | 'DPoS+BFT';

export const EMPTY_BLOOM_HEX = '00'.repeat(256);

/**
 * Header encoding versions. 0: the first format (11 fields, transactions root over txids, no receipts
 * root); still decoded and validated under its own rules. 1: a version field first, the transactions
 * root over each transaction's full typed encoding (signatures, public keys, raw EVM bytes), and a
 * receipts root. 2 (every DPoS+BFT block): version 1 plus `last_commit_hash` and `evidence_hash`, which fix
 * the block's consensus data (the parent's commit certificate and the double-sign evidence it includes).
 * Every block this node makes outside BFT is version 1.
 */
export const HEADER_VERSION = 1;
export const BFT_HEADER_VERSION = 2;

/** A block as stored and served. Hashes are 64 lowercase hex without 0x (REST convention). */
export interface Block {
  version: number;
  index: number;
  hash: string;
  previous_hash: string;
  timestamp: number;
  tx_count: number;
  validator: string;
  /** Transactions root (the spec's name). */
  merkle_root: string;
  state_root: string;
  /** sha256 of the block's receipts encoding (version 1; empty in version 0). */
  receipts_root: string;
  round: number;
  /** EVM gas used by the block (native transactions count no EVM gas). */
  gas_used: bigint;
  /** 2048-bit bloom of the block's EVM logs (512 hex). */
  logs_bloom: string;
  consensus: ConsensusPhase;
  /** Proposer's compact signature over the block hash (128 hex; empty for genesis). */
  signature: string;
  /** Encoded BFT justification (commit certificate); empty unless consensus is DPoS+BFT. */
  justification: Uint8Array;
  transactions: SignedTransaction[];
  /**
   * Version 2: sha256 of `last_commit` (the parent's commit certificate, fixed by this block's hash so
   * every node reads the same signers of the parent) and of the evidence list's encoding. '' before.
   */
  last_commit_hash: string;
  evidence_hash: string;
  /** Version 2: the parent's justification as this block's proposer had it (empty when the parent is not BFT). */
  last_commit: Uint8Array;
  /** Version 2: encoded double-sign evidence (chain/evidence.ts), each applied (slashing) by this block. */
  evidence: Uint8Array[];
}

export type BlockHeader = Omit<Block, 'hash' | 'signature' | 'justification' | 'transactions' | 'last_commit' | 'evidence'>;

/** The consensus data of a version-2 block body. */
export interface ConsensusData {
  last_commit: Uint8Array;
  evidence: Uint8Array[];
}

export const lastCommitHash = (lastCommit: Uint8Array): string => toHex(sha256(lastCommit));
const hashEvidence = (evidence: readonly Uint8Array[]): string => toHex(sha256(RLP.encode(evidence as Uint8Array[])));
/** Nearly every block carries no evidence: that hash once (every block's header check asks for it). */
let emptyEvidenceHash: string | undefined;
export const evidenceHash = (evidence: readonly Uint8Array[]): string =>
  evidence.length === 0 ? (emptyEvidenceHash ??= hashEvidence(evidence)) : hashEvidence(evidence);

const CONSENSUS_PHASES: readonly string[] = ['PoA', 'DPoS', 'DPoS+BFT'];

const HEX_BYTES = /^(?:[0-9a-fA-F]{2})*$/;

/** A hex field of the header as RLP (hex); throws on anything fromHex would refuse. */
function hexField(hex: string): string {
  const body = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (!HEX_BYTES.test(body)) throw new Error('invalid hex string');
  return rlpStrHex(body);
}

function intField(n: number | bigint): string {
  if (typeof n === 'number' ? !Number.isSafeInteger(n) || n < 0 : n < 0n) throw new RangeError(`not a header integer: ${n}`);
  return rlpStrHex(rlpIntHex(n));
}

/**
 * Canonical header encoding: RLP of the fields in fixed order; hash = SHA-256 of it. Written as one hex
 * string and decoded once (it runs for every block made, checked and stored); byte-identical to
 * RLP.encode of the fields (`encodeHeaderFields`, which a test keeps it equal to).
 */
export function encodeHeader(h: BlockHeader): Uint8Array {
  const tail =
    intField(h.index) +
    hexField(h.previous_hash) +
    intField(h.timestamp) +
    hexField(h.validator) +
    hexField(h.merkle_root) +
    hexField(h.state_root);
  const consensus = rlpStrHex(Buffer.from(h.consensus, 'utf8').toString('hex'));
  if (h.version === 0) {
    const body = tail + intField(h.round) + intField(h.tx_count) + intField(h.gas_used) + consensus + hexField(h.logs_bloom);
    return Buffer.from(rlpListHex(body), 'hex');
  }
  let body =
    intField(h.version) +
    tail +
    hexField(h.receipts_root) +
    intField(h.round) +
    intField(h.tx_count) +
    intField(h.gas_used) +
    consensus +
    hexField(h.logs_bloom);
  if (h.version >= 2) body += hexField(h.last_commit_hash) + hexField(h.evidence_hash);
  return Buffer.from(rlpListHex(body), 'hex');
}

/** The header encoding through @ethereumjs/rlp: the reference encodeHeader is kept equal to. */
export function encodeHeaderFields(h: BlockHeader): Uint8Array {
  const tail = [
    bigToBytes(BigInt(h.index)),
    fromHex(h.previous_hash),
    bigToBytes(BigInt(h.timestamp)),
    fromHex(h.validator),
    fromHex(h.merkle_root),
    fromHex(h.state_root),
  ];
  if (h.version === 0) {
    return RLP.encode([
      ...tail,
      bigToBytes(BigInt(h.round)),
      bigToBytes(BigInt(h.tx_count)),
      bigToBytes(h.gas_used),
      Buffer.from(h.consensus, 'utf8'),
      fromHex(h.logs_bloom),
    ]);
  }
  const fields = [
    bigToBytes(BigInt(h.version)),
    ...tail,
    fromHex(h.receipts_root),
    bigToBytes(BigInt(h.round)),
    bigToBytes(BigInt(h.tx_count)),
    bigToBytes(h.gas_used),
    Buffer.from(h.consensus, 'utf8'),
    fromHex(h.logs_bloom),
  ];
  if (h.version >= 2) fields.push(fromHex(h.last_commit_hash), fromHex(h.evidence_hash));
  return RLP.encode(fields);
}

export const blockHash = (h: BlockHeader): string => toHex(sha256(encodeHeader(h)));

/** Malformed header bytes (a peer's or a damaged record). */
export class BlockDecodeError extends Error {}

function decodeHeader(headerRlp: Uint8Array): BlockHeader {
  const f = decodeRlp(headerRlp);
  if (!Array.isArray(f) || f.some((x) => !(x instanceof Uint8Array)))
    throw new BlockDecodeError('header is not a list of byte strings');
  const b = f as Uint8Array[];
  const v1 = b.length === 13 || b.length === 15;
  if (!v1 && b.length !== 11) throw new BlockDecodeError(`header has ${b.length} fields`);
  const version = v1 ? Number(bytesToBig(b[0])) : 0;
  if (v1 && version !== (b.length === 15 ? 2 : 1))
    throw new BlockDecodeError(`header version ${version} with ${b.length} fields`);
  const o = v1 ? 1 : 0;
  const at = (i: number): Uint8Array => b[i + o];
  const len = (i: number, n: number, what: string): Uint8Array => {
    if (at(i).length !== n) throw new BlockDecodeError(`${what} must be ${n} bytes`);
    return at(i);
  };
  const r = v1 ? 1 : 0;
  const consensus = Buffer.from(at(9 + r)).toString('utf8');
  if (!CONSENSUS_PHASES.includes(consensus)) throw new BlockDecodeError(`unknown consensus ${consensus}`);
  const small = (x: Uint8Array, what: string): number => {
    if (x.length > 6) throw new BlockDecodeError(`${what} out of range`);
    return Number(bytesToBig(x));
  };
  return {
    version,
    index: small(at(0), 'index'),
    previous_hash: toHex(len(1, 32, 'previous_hash')),
    timestamp: small(at(2), 'timestamp'),
    validator: to0x(len(3, 20, 'validator')),
    merkle_root: toHex(len(4, 32, 'merkle_root')),
    state_root: toHex(len(5, 32, 'state_root')),
    receipts_root: v1 ? toHex(len(6, 32, 'receipts_root')) : '',
    round: small(at(6 + r), 'round'),
    tx_count: small(at(7 + r), 'tx_count'),
    gas_used: bytesToBig(at(8 + r)),
    consensus: consensus as ConsensusPhase,
    logs_bloom: toHex(len(10 + r, 256, 'logs_bloom')),
    last_commit_hash: version >= 2 ? toHex(len(12, 32, 'last_commit_hash')) : '',
    evidence_hash: version >= 2 ? toHex(len(13, 32, 'evidence_hash')) : '',
  };
}

/** Transactions root: merkle root of sha256 of each full typed encoding (v1) or of the txids (v0). */
export function txMerkleRoot(txs: readonly SignedTransaction[], version = HEADER_VERSION): string {
  const c = crypto();
  if (version === 0) return toHex(c.merkleRoot(txs.map((t) => fromHex(t.txid))));
  // Production computes it for the header and validation checks it: the same list, hashed once.
  const known = txRoots.get(txs);
  if (known && known.length === txs.length) return known.root;
  const root = toHex(c.merkleRoot(c.sha256Many(txs.map(encodeTransaction))));
  txRoots.set(txs, { length: txs.length, root });
  return root;
}

const txRoots = new WeakMap<readonly SignedTransaction[], { length: number; root: string }>();

/** Receipts root (v1): sha256 of the block's receipts encoding, the exact bytes the node stores. */
export const receiptsRootOf = (encodedReceipts: Uint8Array): string => toHex(sha256(encodedReceipts));

export function headerOf(b: Block): BlockHeader {
  return {
    version: b.version,
    index: b.index,
    previous_hash: b.previous_hash,
    timestamp: b.timestamp,
    tx_count: b.tx_count,
    validator: b.validator,
    merkle_root: b.merkle_root,
    state_root: b.state_root,
    receipts_root: b.receipts_root,
    round: b.round,
    gas_used: b.gas_used,
    logs_bloom: b.logs_bloom,
    consensus: b.consensus,
    last_commit_hash: b.last_commit_hash,
    evidence_hash: b.evidence_hash,
  };
}

/**
 * Block encoding: RLP [header, signature, justification, [typed tx encodings]] (v0: txs as field lists);
 * version 2 appends [last_commit, [evidence...]].
 */
export function encodeBlock(b: Block): Uint8Array {
  if (b.version !== 0) {
    // Built in one allocation per list (the transaction list is the bulk of a block).
    const sig = b.signature ? fromHex(b.signature) : new Uint8Array(0);
    const tail = [rlpBytesList(b.transactions.map(encodeTransaction))];
    if (b.version >= 2) tail.push(rlpBytesList([b.last_commit], [rlpBytesList(b.evidence)]));
    return rlpBytesList([encodeHeader(headerOf(b)), sig, b.justification], tail);
  }
  return RLP.encode([
    encodeHeader(headerOf(b)),
    b.signature ? fromHex(b.signature) : new Uint8Array(0),
    b.justification,
    b.transactions.map(transactionFields),
  ]);
}

/** Decode a stored or received block. Throws BlockDecodeError (or an RLP error) on malformed bytes. */
export function decodeBlock(bytes: Uint8Array): Block {
  const top = decodeRlp(bytes);
  if (!Array.isArray(top) || (top.length !== 4 && top.length !== 5))
    throw new BlockDecodeError('block must be a list of 4 (5 from version 2) items');
  const [headerRlp, sig, just, txs, data] = top as [Uint8Array, Uint8Array, Uint8Array, unknown, unknown];
  if (
    !(headerRlp instanceof Uint8Array) ||
    !(sig instanceof Uint8Array) ||
    !(just instanceof Uint8Array) ||
    !Array.isArray(txs)
  ) {
    throw new BlockDecodeError('malformed block envelope');
  }
  const header = decodeHeader(headerRlp);
  const consensusData = decodeConsensusData(header.version, data);
  return {
    ...header,
    hash: toHex(sha256(headerRlp)),
    signature: toHex(sig),
    justification: just,
    transactions: txs.map((t) => (t instanceof Uint8Array ? decodeTransaction(t) : decodeTransactionFields(t as Uint8Array[]))),
    ...consensusData,
  };
}

function decodeConsensusData(version: number, data: unknown): ConsensusData {
  if (version < 2) {
    if (data !== undefined) throw new BlockDecodeError(`a version ${version} block has no consensus data`);
    return { last_commit: new Uint8Array(0), evidence: [] };
  }
  if (!Array.isArray(data) || data.length !== 2 || !(data[0] instanceof Uint8Array) || !Array.isArray(data[1]))
    throw new BlockDecodeError('consensus data must be [last_commit, [evidence...]]');
  const evidence = data[1] as unknown[];
  if (evidence.some((e) => !(e instanceof Uint8Array))) throw new BlockDecodeError('evidence items must be byte strings');
  return { last_commit: data[0], evidence: evidence as Uint8Array[] };
}

/** Height of an encoded block from its header alone (throws BlockDecodeError on malformed bytes). */
export function blockHeightOf(bytes: Uint8Array): number {
  const top = decodeRlp(bytes);
  if (!Array.isArray(top) || !(top[0] instanceof Uint8Array)) throw new BlockDecodeError('block must be a list');
  return decodeHeader(top[0]).index;
}

/** Hash and transaction ids of an encoded block without decoding its transactions (log queries read many). */
export function decodeBlockRefs(bytes: Uint8Array): { hash: string; txids: Uint8Array[] } {
  const [headerRlp, , , txs] = decodeRlp(bytes) as [Uint8Array, Uint8Array, Uint8Array, (Uint8Array | Uint8Array[])[]];
  // The txid is the first RLP field of either form; a typed encoding skips its type byte first.
  return {
    hash: toHex(sha256(headerRlp)),
    txids: txs.map((t) => (t instanceof Uint8Array ? (decodeRlp(t.subarray(1)) as Uint8Array[])[0] : t[0])),
  };
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
    receipts_root: b.receipts_root,
    round: b.round,
    has_justification: b.justification.length > 0,
    consensus: b.consensus,
  };
}
