/**
 * Wire forms of the BFT messages on the consensus gossip topic (docs/p2p.md): a proposal with its block,
 * a proposal by reference (its block is fetched by hash over request/response when the whole message
 * would exceed the gossip limit), and a vote. Decoding is strict: anything malformed is the sender's fault.
 */
import { RLP } from '@ethereumjs/rlp';
import { decodeRlp, bigToBytes, bytesToBig, fromHex, toHex } from '../util/index.js';
import { type Block, decodeBlock, encodeBlock, PRECOMMIT, PREVOTE, type Vote } from '../chain/index.js';

export interface Proposal {
  height: number;
  round: number;
  /** Round in which this block gathered a prevote quorum (-1: a fresh block). */
  pol_round: number;
  block: Block;
  signature: string;
}

/** A proposal whose block travels separately (fetched by hash from the peer that published it). */
export interface ProposalRef {
  height: number;
  round: number;
  pol_round: number;
  block_hash: string;
  signature: string;
}

export type ConsensusMessage =
  | { kind: 'proposal'; proposal: Proposal }
  | { kind: 'proposal_ref'; ref: ProposalRef }
  | { kind: 'vote'; vote: Vote };

/** A consensus message that cannot be valid (wrong signer, bad signature, malformed): the sender misbehaved. */
export class InvalidConsensusMessage extends Error {}

const TYPE_PROPOSAL = 1;
const TYPE_VOTE = 2;
const TYPE_PROPOSAL_REF = 3;

const HASH = /^[0-9a-f]{64}$/;
const SIG = /^[0-9a-f]{128}$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;

const small = (n: number): Uint8Array => bigToBytes(BigInt(n));

/** 0x01 || RLP[height, round, pol_round + 1, block, signature]; 0x02 || JSON(vote); 0x03 || RLP[..., block_hash, signature]. */
export function encodeConsensusMessage(m: ConsensusMessage): Uint8Array {
  if (m.kind === 'vote') return Buffer.concat([Buffer.from([TYPE_VOTE]), Buffer.from(JSON.stringify(m.vote))]);
  if (m.kind === 'proposal_ref') {
    const r = m.ref;
    const body = RLP.encode([
      small(r.height),
      small(r.round),
      small(r.pol_round + 1),
      fromHex(r.block_hash),
      fromHex(r.signature),
    ]);
    return Buffer.concat([Buffer.from([TYPE_PROPOSAL_REF]), body]);
  }
  const p = m.proposal;
  const body = RLP.encode([small(p.height), small(p.round), small(p.pol_round + 1), encodeBlock(p.block), fromHex(p.signature)]);
  return Buffer.concat([Buffer.from([TYPE_PROPOSAL]), body]);
}

/** The proposal as gossip carries it: whole when it fits in maxBytes, else by reference. */
export function encodeForGossip(m: ConsensusMessage, maxBytes: number): Uint8Array {
  const whole = encodeConsensusMessage(m);
  if (whole.length <= maxBytes || m.kind !== 'proposal') return whole;
  const { block, ...rest } = m.proposal;
  return encodeConsensusMessage({ kind: 'proposal_ref', ref: { ...rest, block_hash: block.hash } });
}

function int(b: unknown, what: string): number {
  if (!(b instanceof Uint8Array) || b.length > 6) throw new Error(`${what} is not a small integer`);
  return Number(bytesToBig(b));
}

function decodeVote(bytes: Uint8Array): Vote {
  const v = JSON.parse(Buffer.from(bytes).toString('utf8')) as Vote;
  if (v === null || typeof v !== 'object') throw new Error('vote is not an object');
  if (v.type !== PREVOTE && v.type !== PRECOMMIT) throw new Error('bad vote type');
  if (!Number.isSafeInteger(v.height) || v.height < 1 || !Number.isSafeInteger(v.round) || v.round < 0)
    throw new Error('bad vote height or round');
  if (typeof v.block_hash !== 'string' || (v.block_hash !== '' && !HASH.test(v.block_hash))) throw new Error('bad block_hash');
  if (typeof v.validator !== 'string' || !ADDRESS.test(v.validator)) throw new Error('bad validator');
  if (typeof v.signature !== 'string' || !SIG.test(v.signature)) throw new Error('bad signature');
  return {
    type: v.type,
    height: v.height,
    round: v.round,
    block_hash: v.block_hash,
    validator: v.validator,
    signature: v.signature,
  };
}

export function decodeConsensusMessage(bytes: Uint8Array): ConsensusMessage {
  try {
    const body = bytes.subarray(1);
    if (bytes[0] === TYPE_VOTE) return { kind: 'vote', vote: decodeVote(body) };
    if (bytes[0] === TYPE_PROPOSAL || bytes[0] === TYPE_PROPOSAL_REF) {
      const f = decodeRlp(body) as unknown;
      if (!Array.isArray(f) || f.length !== 5 || !(f[3] instanceof Uint8Array) || !(f[4] instanceof Uint8Array))
        throw new Error('proposal must be a list of 5 items');
      const head = { height: int(f[0], 'height'), round: int(f[1], 'round'), pol_round: int(f[2], 'pol_round') - 1 };
      if (f[4].length !== 64) throw new Error('bad signature length');
      const signature = toHex(f[4]);
      if (bytes[0] === TYPE_PROPOSAL) return { kind: 'proposal', proposal: { ...head, block: decodeBlock(f[3]), signature } };
      if (f[3].length !== 32) throw new Error('bad block hash length');
      return { kind: 'proposal_ref', ref: { ...head, block_hash: toHex(f[3]), signature } };
    }
  } catch (err) {
    throw new InvalidConsensusMessage(`malformed consensus message: ${(err as Error).message}`);
  }
  throw new InvalidConsensusMessage(`unknown consensus message type ${bytes[0]}`);
}

/** Height a message is for. */
export const messageHeight = (m: ConsensusMessage): number =>
  m.kind === 'vote' ? m.vote.height : m.kind === 'proposal' ? m.proposal.height : m.ref.height;
