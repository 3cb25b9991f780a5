/**
 * BFT votes and the commit certificate (a block's `justification`). Validators sign votes with their
 * validator key over a digest that fixes the chain id, height, round, step and block hash, so a vote can
 * never be replayed on another chain, height, round or step. A block is final when precommits for it in
 * one round carry at least 3/4 of the active stake; those precommits, encoded here, are its
 * justification, stored with the block and verified by every follower, by sync and by /chain/validate.
 */
import { RLP } from '@ethereumjs/rlp';
import { decodeRlp, bigToBytes, bytesToBig, fromHex, to0x, toHex } from '../util/index.js';
import { crypto, sha256 } from '../crypto/index.js';
import { isLowS } from '../ledger/index.js';
import type { GenesisValidator } from './params.js';
import { type ActiveValidator, totalPower } from './schedule.js';
import { type SignatureCheck, firstFailing, publicKeyBytes } from './signature-checks.js';

export const PREVOTE = 1;
export const PRECOMMIT = 2;
export type VoteType = typeof PREVOTE | typeof PRECOMMIT;

export interface Vote {
  type: VoteType;
  height: number;
  round: number;
  /** Block hash voted for, or '' for nil. */
  block_hash: string;
  validator: string;
  signature: string;
}

/** The digest a validator signs for a vote. */
export function voteDigest(chainId: number, v: Omit<Vote, 'validator' | 'signature'>): Uint8Array {
  return sha256(Buffer.from(`native-vote/${chainId}/${v.height}/${v.round}/${v.type}/${v.block_hash}`, 'utf8'));
}

/** The digest a proposer signs for a proposal (block hash, round, and the round it was valid in). */
export function proposalDigest(chainId: number, height: number, round: number, polRound: number, blockHash: string): Uint8Array {
  return sha256(Buffer.from(`native-proposal/${chainId}/${height}/${round}/${polRound}/${blockHash}`, 'utf8'));
}

/** Signature check of a vote against the validator's key. */
export function verifyVote(chainId: number, v: Vote, validator: GenesisValidator | undefined): boolean {
  if (!validator || !/^[0-9a-f]{128}$/.test(v.signature)) return false;
  const sig = fromHex(v.signature);
  return isLowS(sig) && crypto().verify(sig, voteDigest(chainId, v), fromHex(validator.public_key));
}

/** A quorum: voting power of at least 3/4 of the active set's total (spec: "3/4 stake-weighted"). */
export const isQuorum = (power: bigint, total: bigint): boolean => total > 0n && power * 4n >= total * 3n;

/** More than 1/4 of the total power: at least one honest validator is among them (the f + 1 of the paper). */
export const isMoreThanFaulty = (power: bigint, total: bigint): boolean => power * 4n > total;

/** A set's validators by address (sets are immutable and shared: indexed once). */
const indexes = new WeakMap<readonly ActiveValidator[], Map<string, ActiveValidator>>();
function addressIndex(set: readonly ActiveValidator[]): Map<string, ActiveValidator> {
  let m = indexes.get(set);
  if (!m) {
    m = new Map(set.map((v) => [v.address, v]));
    indexes.set(set, m);
  }
  return m;
}

/** Voting power of the given validators in a set (unknown addresses count nothing). */
export function powerOf(set: readonly ActiveValidator[], addresses: Iterable<string>): bigint {
  const byAddress = addressIndex(set);
  let sum = 0n;
  for (const a of addresses) sum += byAddress.get(a)?.power ?? 0n;
  return sum;
}

export interface Justification {
  /** Round of the precommits (the block may have been proposed in an earlier round). */
  round: number;
  precommits: { validator: string; signature: string }[];
}

export function encodeJustification(j: Justification): Uint8Array {
  return RLP.encode([bigToBytes(BigInt(j.round)), j.precommits.map((p) => [fromHex(p.validator), fromHex(p.signature)])]);
}

/** Decoded certificates by their bytes object (a block's certificate is read by several rules and by sync). */
const decoded = new WeakMap<Uint8Array, Justification>();

/**
 * The last certificate decoded, by content: a block's last_commit is its parent's certificate again, in
 * another bytes object (decoded from the wire), and a syncing node reads both one block apart.
 */
let lastDecoded: { bytes: Uint8Array; j: Justification } | null = null;

export function decodeJustification(bytes: Uint8Array): Justification {
  const known = decoded.get(bytes);
  if (known) return known;
  if (lastDecoded && Buffer.compare(lastDecoded.bytes, bytes) === 0) {
    decoded.set(bytes, lastDecoded.j);
    return lastDecoded.j;
  }
  // Shared by every reader of these bytes: frozen, so none can change what the next one reads.
  const j = decodeJustificationBytes(bytes);
  for (const p of j.precommits) Object.freeze(p);
  Object.freeze(j.precommits);
  decoded.set(bytes, Object.freeze(j));
  // A copy: the caller's bytes may be a view of a buffer it reuses.
  lastDecoded = { bytes: Uint8Array.from(bytes), j };
  return j;
}

function decodeJustificationBytes(bytes: Uint8Array): Justification {
  const d = decodeRlp(bytes) as unknown;
  if (!Array.isArray(d) || d.length !== 2 || !(d[0] instanceof Uint8Array) || !Array.isArray(d[1])) {
    throw new Error('justification is not [round, precommits]');
  }
  return {
    round: Number(bytesToBig(d[0] as Uint8Array)),
    precommits: (d[1] as unknown[]).map((p) => {
      if (!Array.isArray(p) || p.length !== 2) throw new Error('malformed precommit');
      return { validator: to0x(p[0] as Uint8Array), signature: toHex(p[1] as Uint8Array) };
    }),
  };
}

/**
 * The structure of a certificate for this block at this height: distinct validators of the set,
 * well-formed low-S signatures, at least a quorum of voting power. Returns why it cannot finalize the
 * block, or the precommit signatures still to verify.
 */
export function certificateChecks(
  chainId: number,
  height: number,
  blockHash: string,
  bytes: Uint8Array,
  validators: readonly ActiveValidator[],
): { problem: string } | { checks: SignatureCheck[] } {
  let j: Justification;
  try {
    j = decodeJustification(bytes);
  } catch (err) {
    return { problem: (err as Error).message };
  }
  const byAddress = addressIndex(validators);
  const seen = new Set<string>();
  const checks: SignatureCheck[] = [];
  // Every precommit of the certificate signs the same (height, round, block hash).
  const digest = voteDigest(chainId, { type: PRECOMMIT, height, round: j.round, block_hash: blockHash });
  for (const p of j.precommits) {
    if (seen.has(p.validator)) return { problem: `validator ${p.validator} precommits twice` };
    seen.add(p.validator);
    const validator = byAddress.get(p.validator);
    if (!validator || !/^[0-9a-f]{128}$/.test(p.signature) || !isLowS(fromHex(p.signature)))
      return { problem: `precommit of ${p.validator} does not verify` };
    checks.push({
      sig: fromHex(p.signature),
      digest,
      pub: publicKeyBytes(validator.public_key),
      what: `precommit of ${p.validator}`,
    });
  }
  const power = powerOf(validators, seen);
  const total = totalPower(validators);
  if (!isQuorum(power, total)) return { problem: `precommits carry ${power} of ${total} voting power, 3/4 needed` };
  return { checks };
}

/**
 * Why a justification does not finalize this block at this height (null when it does): distinct
 * validators of the set, each precommit signed for (height, round, block hash), at least a quorum.
 */
export function justificationProblem(
  chainId: number,
  height: number,
  blockHash: string,
  bytes: Uint8Array,
  validators: readonly ActiveValidator[],
): string | null {
  const c = certificateChecks(chainId, height, blockHash, bytes, validators);
  if ('problem' in c) return c.problem;
  const bad = firstFailing(c.checks);
  return bad ? `${bad.what} does not verify` : null;
}

/** Addresses whose precommits a stored justification holds (empty when none or unreadable). */
export function justificationSigners(bytes: Uint8Array): string[] {
  if (bytes.length === 0) return [];
  try {
    return decodeJustification(bytes).precommits.map((p) => p.validator);
  } catch {
    return [];
  }
}
