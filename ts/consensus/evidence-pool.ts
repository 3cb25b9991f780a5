import {
  type Block,
  type Chain,
  type DoubleSignEvidence,
  EVIDENCE_MAX_AGE_BLOCKS,
  MAX_EVIDENCE_PER_BLOCK,
  decodeEvidence,
  encodeEvidence,
  evidenceId,
  evidenceProblem,
  validatorSetAt,
} from '../chain/index.js';
import { getValidator } from '../ledger/index.js';

/** Pending evidence kept at most (older entries are dropped first). */
export const MAX_PENDING_EVIDENCE = 1000;
/** Included evidence remembered for queries. */
const MAX_COMMITTED_KEPT = 1000;

/** Evidence refused by the pool (the sender of gossiped evidence misbehaved). */
export class InvalidEvidenceError extends Error {}

export interface EvidenceEntry {
  id: string;
  validator: string;
  height: number;
  round: number;
  /** 1 prevote, 2 precommit. */
  type: number;
  block_hashes: [string, string];
  /** Height of the block that included it (null while pending). */
  included_at: number | null;
}

/** The pool's bounds; the defaults are the node's (tests make them small to reach them in a few blocks). */
export interface EvidencePoolLimits {
  /** Pending evidence kept at most. */
  maxPending: number;
  /** Evidence older than this many blocks leaves the pool (at most the block rule's EVIDENCE_MAX_AGE_BLOCKS). */
  maxAgeBlocks: number;
}

const entryOf = (id: string, e: DoubleSignEvidence, includedAt: number | null): EvidenceEntry => ({
  id,
  validator: e.a.validator,
  height: e.a.height,
  round: e.a.round,
  type: e.a.type,
  block_hashes: [e.a.block_hash, e.b.block_hash],
  included_at: includedAt,
});

/**
 * Double-sign evidence this node saw (its own BFT engine, or gossip) until a block includes it
 * (CometBFT's evidence pool): verified on arrival under the block rule (evidenceProblem) against the
 * head, handed to proposers, and dropped once included or too old. Included evidence of the blocks this
 * node committed is remembered for queries.
 */
export class EvidencePool {
  private readonly pending = new Map<string, DoubleSignEvidence>();
  private readonly committed: EvidenceEntry[] = [];

  private readonly limits: EvidencePoolLimits;

  constructor(
    private readonly chain: Chain,
    limits: Partial<EvidencePoolLimits> = {},
  ) {
    this.limits = { maxPending: MAX_PENDING_EVIDENCE, maxAgeBlocks: EVIDENCE_MAX_AGE_BLOCKS, ...limits };
    const recent = [...chain.blocks.recentBlocks()].reverse();
    for (const b of recent) this.onBlock(b);
    chain.on('block', (b) => this.onBlock(b));
  }

  /**
   * Check and add evidence; false when already known or not checkable yet (a height beyond the one being
   * decided: this node is behind). Evidence of the height being decided waits in the pool until a later
   * block may include it. Throws InvalidEvidenceError for evidence that can never be valid.
   */
  add(e: DoubleSignEvidence): boolean {
    const id = evidenceId(e);
    if (this.pending.has(id) || e.a.height > this.chain.height + 1) return false;
    const problem = this.problem(e);
    if (problem?.startsWith('already included') || this.moot(e)) return false;
    if (problem) throw new InvalidEvidenceError(problem);
    if (this.pending.size >= this.limits.maxPending) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
    }
    this.pending.set(id, e);
    return true;
  }

  /** Gossiped bytes: decoded and added. Throws InvalidEvidenceError for undecodable or invalid evidence. */
  addEncoded(bytes: Uint8Array): DoubleSignEvidence | null {
    let e: DoubleSignEvidence;
    try {
      e = decodeEvidence(bytes);
    } catch (err) {
      throw new InvalidEvidenceError((err as Error).message);
    }
    // One item, one encoding (integers without leading zeros): a variant would travel as a new gossip message.
    if (!Buffer.from(encodeEvidence(e)).equals(bytes)) throw new InvalidEvidenceError('evidence not in its canonical encoding');
    return this.add(e) ? e : null;
  }

  /** The block rule for this evidence in the next block (or, for the height being decided, the one after). */
  private problem(e: DoubleSignEvidence): string | null {
    const { params, state } = this.chain;
    const at = Math.max(this.chain.height + 1, e.a.height + 1);
    if (at - e.a.height > this.limits.maxAgeBlocks)
      return `evidence from ${e.a.height} is older than ${this.limits.maxAgeBlocks} blocks`;
    return evidenceProblem(params.chainId, e, at, (h) => validatorSetAt(params, state, h), state);
  }

  /**
   * Evidence against a validator already tombstoned (by an earlier item) can change nothing: the pool
   * drops it instead of waiting for a block to carry it (none may, once the set falls below the BFT
   * floor and blocks carry no evidence).
   */
  private moot(e: DoubleSignEvidence): boolean {
    return getValidator(this.chain.state, e.a.validator)?.status === 'tombstoned';
  }

  /** Evidence for the next block: still valid against the head, at most MAX_EVIDENCE_PER_BLOCK items. */
  forProposal(): Uint8Array[] {
    const out: Uint8Array[] = [];
    const next = this.chain.height + 1;
    for (const [id, e] of this.pending) {
      if (e.a.height >= next) continue; // of the height being decided: a later block includes it
      if (this.problem(e) || this.moot(e)) {
        this.pending.delete(id);
        continue;
      }
      out.push(encodeEvidence(e));
      if (out.length >= MAX_EVIDENCE_PER_BLOCK) break;
    }
    return out;
  }

  private onBlock(b: Block): void {
    for (const bytes of b.evidence) {
      const e = decodeEvidence(bytes);
      const id = evidenceId(e);
      this.pending.delete(id);
      this.committed.push(entryOf(id, e, b.index));
      if (this.committed.length > MAX_COMMITTED_KEPT) this.committed.shift();
    }
    // What no block may include any more (too old, its validator out of the set) or what could change
    // nothing (its validator tombstoned by an earlier item) leaves the pool, on every node, proposer or not.
    for (const [id, e] of this.pending) if (this.problem(e) || this.moot(e)) this.pending.delete(id);
  }

  /** Pending evidence, and evidence included by the blocks of the node's recent window and since it started (newest last). */
  list(): { pending: EvidenceEntry[]; committed: EvidenceEntry[] } {
    return {
      pending: [...this.pending].map(([id, e]) => entryOf(id, e, null)),
      committed: [...this.committed],
    };
  }
}
