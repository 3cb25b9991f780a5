/**
 * Double-sign evidence: two votes signed by one validator for the same height, round and step but for
 * different blocks (CometBFT's DuplicateVoteEvidence). Validators that see such a pair on the network
 * gossip it and the next proposer includes it in a block (`Block.evidence`, fixed by `evidence_hash`);
 * every node checks it there with `evidenceProblem` and applies it: the evidence is recorded in state
 * (so it is never included twice) and handed to the ledger's double-sign hook, where staking slashes and
 * tombstones the validator.
 */
import { RLP } from '@ethereumjs/rlp';
import { decodeRlp, bigToBytes, bytesToBig, fromHex, to0x, toHex } from '../util/index.js';
import { sha256 } from '../crypto/index.js';
import { applyDoubleSign, type OperationEnv } from '../ledger/index.js';
import { NS, type KeyStr, type StateOverlay, type StateReader, keyStr } from '../state/index.js';
import { PRECOMMIT, PREVOTE, type Vote, verifyVote } from './justification.js';
import type { ActiveValidator } from './schedule.js';

/** Evidence older than this many blocks is refused (CometBFT's max_age_num_blocks). */
export const EVIDENCE_MAX_AGE_BLOCKS = 100_000;
/** Evidence items one block may include. */
export const MAX_EVIDENCE_PER_BLOCK = 16;
/** One encoded evidence item at most (two votes are ~300 bytes). */
export const MAX_EVIDENCE_BYTES = 1024;

export interface DoubleSignEvidence {
  /** The two conflicting votes, ordered by block hash ('' = nil first), so one conflict has one encoding. */
  a: Vote;
  b: Vote;
}

/** Build the canonical evidence of two conflicting votes (the caller checked they conflict). */
export function doubleSignEvidence(x: Vote, y: Vote): DoubleSignEvidence {
  return x.block_hash < y.block_hash ? { a: x, b: y } : { a: y, b: x };
}

/** RLP [height, round, type, validator, [hash_a, sig_a], [hash_b, sig_b]]; a nil vote's hash is empty. */
export function encodeEvidence(e: DoubleSignEvidence): Uint8Array {
  const vote = (v: Vote) => [v.block_hash ? fromHex(v.block_hash) : new Uint8Array(0), fromHex(v.signature)];
  return RLP.encode([
    bigToBytes(BigInt(e.a.height)),
    bigToBytes(BigInt(e.a.round)),
    bigToBytes(BigInt(e.a.type)),
    fromHex(e.a.validator),
    vote(e.a),
    vote(e.b),
  ]);
}

export class EvidenceDecodeError extends Error {}

export function decodeEvidence(bytes: Uint8Array): DoubleSignEvidence {
  if (bytes.length > MAX_EVIDENCE_BYTES) throw new EvidenceDecodeError(`evidence of ${bytes.length} bytes`);
  let f: unknown;
  try {
    f = decodeRlp(bytes);
  } catch (err) {
    throw new EvidenceDecodeError(`evidence is not RLP: ${(err as Error).message}`);
  }
  const isBytes = (x: unknown, max: number): x is Uint8Array => x instanceof Uint8Array && x.length <= max;
  const isVote = (x: unknown): x is [Uint8Array, Uint8Array] =>
    Array.isArray(x) && x.length === 2 && isBytes(x[0], 32) && isBytes(x[1], 64);
  if (!Array.isArray(f) || f.length !== 6 || !isBytes(f[0], 6) || !isBytes(f[1], 4) || !isBytes(f[2], 1))
    throw new EvidenceDecodeError('evidence must be [height, round, type, validator, vote, vote]');
  if (!(f[3] instanceof Uint8Array) || f[3].length !== 20 || !isVote(f[4]) || !isVote(f[5]))
    throw new EvidenceDecodeError('malformed evidence votes');
  const type = Number(bytesToBig(f[2]));
  if (type !== PREVOTE && type !== PRECOMMIT) throw new EvidenceDecodeError(`unknown vote type ${type}`);
  const common = {
    type: type as Vote['type'],
    height: Number(bytesToBig(f[0])),
    round: Number(bytesToBig(f[1])),
    validator: to0x(f[3]),
  };
  const vote = (v: [Uint8Array, Uint8Array]): Vote => ({ ...common, block_hash: toHex(v[0]), signature: toHex(v[1]) });
  return { a: vote(f[4]), b: vote(f[5]) };
}

/** Identity of an evidence item: sha256 of its encoding (64 hex). */
export const evidenceId = (e: DoubleSignEvidence): string => toHex(sha256(encodeEvidence(e)));

const RECORD_PREFIX = Buffer.concat([Buffer.from([NS.meta]), Buffer.from('evidence/')]);
const recordKey = (id: string): KeyStr => keyStr(Buffer.concat([RECORD_PREFIX, fromHex(id)]));

/** Height of the block that included this evidence, or null (state record). */
export function evidenceIncludedAt(state: StateReader, id: string): number | null {
  const v = state.get(recordKey(id));
  return v ? Number(v.readBigUInt64BE(0)) : null;
}

/**
 * Why this evidence may not be included in a block at `height` (null when it may): a real conflict
 * (same validator, height, round and step, different blocks), both signatures valid, the validator in
 * the set of that height, not from the future, not older than EVIDENCE_MAX_AGE_BLOCKS, not included before.
 */
export function evidenceProblem(
  chainId: number,
  e: DoubleSignEvidence,
  height: number,
  validatorsAt: (height: number) => readonly ActiveValidator[],
  state: StateReader,
): string | null {
  const { a, b } = e;
  if (a.validator !== b.validator || a.height !== b.height || a.round !== b.round || a.type !== b.type)
    return 'the votes are not for one validator, height, round and step';
  if (a.block_hash >= b.block_hash) return 'the votes are for the same block (or not in canonical order)';
  if (a.height >= height) return `evidence for height ${a.height} in a block at ${height}`;
  if (height - a.height > EVIDENCE_MAX_AGE_BLOCKS)
    return `evidence from ${a.height} is older than ${EVIDENCE_MAX_AGE_BLOCKS} blocks`;
  const validator = validatorsAt(a.height).find((v) => v.address === a.validator);
  if (!validator) return `${a.validator} is not a validator at height ${a.height}`;
  if (!verifyVote(chainId, a, validator) || !verifyVote(chainId, b, validator)) return 'a vote signature does not verify';
  const included = evidenceIncludedAt(state, evidenceId(e));
  if (included !== null) return `already included at height ${included}`;
  return null;
}

/**
 * Apply a block's (checked) evidence before its transactions: record each item in state and let the
 * ledger's double-sign hook slash and tombstone the validator.
 */
export function applyEvidence(state: StateOverlay, evidence: readonly DoubleSignEvidence[], env: OperationEnv): void {
  for (const e of evidence) {
    const at = Buffer.alloc(8);
    at.writeBigUInt64BE(BigInt(env.height));
    state.set(recordKey(evidenceId(e)), at);
    applyDoubleSign(state, e.a.validator, e.a.height, env);
  }
}
