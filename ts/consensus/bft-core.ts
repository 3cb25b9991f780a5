/**
 * The BFT core: Tendermint (arXiv 1807.04938, Algorithm 1) as one deterministic state machine,
 * `step(state, input) → { state, effects }` (CometBFT's consensus/state.go is the model). Inputs are data
 * (a proposal, a vote, a timeout that fired, a block's check outcome, a block built, a new height); effects
 * are data (sign and send a vote or proposal through the sign guard, schedule a timeout, build, fetch, check or
 * commit a block, report evidence). No clock, timer, network, disk or chain is reached from here: the
 * driver (bft.ts, BftEngine) owns them, runs the effects and feeds their outcomes back in. Signatures of
 * incoming messages are checked here (pure computation over the height's validator set); a forged message
 * throws InvalidConsensusMessage before the state changes.
 */
import { type Block, PRECOMMIT, PREVOTE, type Vote, type VoteType } from '../chain/index.js';
import { roundTimeout } from './bft-options.js';
import type { CoreConfig, CoreEffect, CoreInput, CoreResume, CoreState } from './bft-core-types.js';
import type { ConsensusMessage, Proposal, ProposalRef } from './messages.js';
import { STEP_PRECOMMIT, STEP_PREVOTE } from './privval.js';
import { verifyProposalBySet } from './verify-message.js';
import { HeightVotes } from './vote-set.js';

export type { CoreConfig, CoreEffect, CoreInput, CoreResume, CoreState, TimeoutStep } from './bft-core-types.js';

/** The state before the first height: nothing to decide yet (height 0, not active). */
export function initialState(config: CoreConfig): CoreState {
  return {
    config,
    height: 0,
    round: 0,
    step: 'propose',
    active: false,
    validators: [],
    lockedRound: -1,
    lockedHash: null,
    lockedBlock: null,
    validRound: -1,
    validBlock: null,
    proposals: new Map(),
    votes: new HeightVotes(config.chainId, []),
    checking: new Set(),
    valid: new Map(),
    done: new Set(),
  };
}

/**
 * Apply one input. The state is updated in place and returned (the caller keeps only the returned one);
 * the effects are to be carried out in order. Throws InvalidConsensusMessage for a proposal or vote that
 * is not its signer's (the state is unchanged then).
 */
export function step(state: CoreState, input: CoreInput): { state: CoreState; effects: CoreEffect[] } {
  const run = new Step(state);
  run.apply(input);
  return { state, effects: run.effects };
}

/** Proposer of (height, round): (height + round) mod n over the height's validators. */
export function proposerOf(s: CoreState, round: number): string | null {
  const set = s.validators;
  return set.length ? set[(s.height + round) % set.length].address : null;
}

/** The proposal block with this hash at the height, or the locked or valid block (peers fetch them by hash). */
export function blockOf(s: CoreState, hash: string): Block | null {
  for (const p of s.proposals.values()) if (p.block.hash === hash) return p.block;
  for (const b of [s.validBlock, s.lockedBlock]) if (b?.hash === hash) return b;
  return null;
}

/** Every proposal and vote held for the height being decided. */
export function messagesOf(s: CoreState): ConsensusMessage[] {
  const proposals = [...s.proposals.values()].map((proposal): ConsensusMessage => ({ kind: 'proposal', proposal }));
  return [...proposals, ...s.votes.all().map((vote): ConsensusMessage => ({ kind: 'vote', vote }))];
}

/** Throws InvalidConsensusMessage unless the proposer of its (height, round) signed this proposal (or reference). */
export function verifyProposal(s: CoreState, p: Omit<Proposal, 'block'>, blockHash: string): void {
  verifyProposalBySet(s.config.chainId, s.validators, p, blockHash);
}

/** One application of an input: the rules of Algorithm 1 over the state, collecting effects. */
class Step {
  readonly effects: CoreEffect[] = [];

  constructor(private readonly s: CoreState) {}

  apply(input: CoreInput): void {
    const s = this.s;
    switch (input.kind) {
      case 'start_height':
        this.startHeight(input);
        return;
      case 'proposal':
        if (input.proposal.height !== s.height || !s.active) return;
        this.addProposal(input.proposal);
        this.process();
        return;
      case 'proposal_ref':
        if (input.ref.height !== s.height || !s.active) return;
        this.addProposalRef(input.ref, input.from);
        this.process();
        return;
      case 'vote':
        if (input.vote.height !== s.height || !s.active) return;
        this.addVote(input.vote);
        this.process();
        return;
      case 'block_checked':
        if (input.height !== s.height) return;
        s.valid.set(input.hash, input.valid);
        this.process();
        return;
      case 'block_built':
        if (input.height === s.height) s.valid.set(input.block.hash, true);
        return;
      case 'proposal_due':
        if (input.height !== s.height || input.round !== s.round || s.step !== 'propose' || !s.active) return;
        this.emit({ kind: 'sign_proposal', height: s.height, round: s.round, polRound: s.validRound, block: input.block });
        return;
      case 'timeout':
        this.timeout(input.height, input.round, input.step);
        return;
    }
  }

  private emit(e: CoreEffect): void {
    this.effects.push(e);
  }

  private startHeight(input: Extract<CoreInput, { kind: 'start_height' }>): void {
    const s = this.s;
    this.emit({ kind: 'cancel_timeouts' });
    s.height = input.height;
    s.validators = input.validators;
    s.lockedRound = -1;
    s.lockedHash = null;
    s.lockedBlock = null;
    s.validRound = -1;
    s.validBlock = null;
    s.proposals = new Map();
    s.votes = new HeightVotes(s.config.chainId, input.validators);
    s.checking = new Set();
    s.valid = new Map();
    s.done = new Set();
    s.round = 0;
    s.step = 'propose';
    s.active = input.active && s.votes.has(s.config.me);
    if (!s.active) return;
    if (input.resume) this.resume(input.resume, input.slotWaitMs);
    else this.startRound(0, input.slotWaitMs);
  }

  /**
   * After a restart mid-height, resume where the signature state says this validator was: keep its lock
   * and valid block, rejoin its round, and send its votes again (the identical votes; never a second one).
   */
  private resume(r: CoreResume, slotWaitMs: number): void {
    const s = this.s;
    if (r.lock) {
      s.lockedRound = r.lock.round;
      s.lockedHash = r.lock.block_hash;
      s.lockedBlock = r.lockedBlock;
    }
    if (r.valid) {
      s.validRound = r.valid.round;
      s.validBlock = r.valid.block;
    }
    for (const b of [s.lockedBlock, s.validBlock]) if (b) this.checkBlock(b);
    this.emit({
      kind: 'resumed',
      info: {
        height: s.height,
        round: r.round,
        locked_round: s.lockedRound,
        locked_hash: s.lockedHash,
        locked_block: s.lockedHash !== null && blockOf(s, s.lockedHash) !== null,
        valid_round: s.validRound,
      },
    });
    this.startRound(r.round, slotWaitMs);
    // Every earlier vote of the height first; the last one goes through the sign guard again, which
    // answers with the very vote it recorded.
    for (const v of r.votes) {
      if (v.round === r.round && v.step === r.step) continue;
      const type = v.step === STEP_PREVOTE ? PREVOTE : PRECOMMIT;
      this.emit({ kind: 'resend_vote', type, height: s.height, round: v.round, blockHash: v.block_hash });
    }
    if (r.step === STEP_PREVOTE) this.vote(PREVOTE, r.block_hash);
    else if (r.step === STEP_PRECOMMIT) this.vote(PRECOMMIT, r.block_hash);
  }

  /** `slotWaitMs`: round 0 waits for its block-time slot; later rounds start at once. */
  private startRound(r: number, slotWaitMs = 0): void {
    const s = this.s;
    s.round = r;
    s.step = 'propose';
    const h = s.height;
    this.emit({ kind: 'round_started', height: h, round: r });
    const wait = r === 0 ? slotWaitMs : 0;
    if (proposerOf(s, r) === s.config.me) {
      this.emit({ kind: 'propose', height: h, round: r, block: s.validBlock, sendInMs: wait });
    }
    const { proposeMs, deltaMs } = s.config.timeouts;
    this.emit({ kind: 'schedule_timeout', height: h, round: r, step: 'propose', ms: wait + roundTimeout(proposeMs, deltaMs, r) });
    this.process();
  }

  private addVote(v: Vote): void {
    const s = this.s;
    const added = s.votes.add(v);
    if (added === 'known') return;
    if (added !== 'added') {
      this.emit({ kind: 'evidence', evidence: added });
      return;
    }
    // Round skip: more than 1/4 of the voting power is already in a later round.
    if (v.round > s.round && s.votes.roundHasMoreThanFaulty(v.round)) {
      this.emit({ kind: 'cancel_timeouts' });
      this.startRound(v.round);
    }
  }

  private addProposal(p: Proposal): void {
    const s = this.s;
    verifyProposal(s, p, p.block.hash);
    if (s.proposals.has(p.round)) return;
    s.proposals.set(p.round, p);
    this.checkBlock(p.block);
  }

  /** A proposal by reference: taken with the block at hand (a proposal's, the locked or valid one), else fetched. */
  private addProposalRef(ref: ProposalRef, from: string): void {
    const s = this.s;
    verifyProposal(s, ref, ref.block_hash);
    if (s.proposals.has(ref.round)) return;
    const block = blockOf(s, ref.block_hash);
    if (!block) {
      this.emit({ kind: 'fetch_block', ref, from });
      return;
    }
    const { block_hash: _, ...rest } = ref;
    this.addProposal({ ...rest, block });
  }

  /** Ask for the block-validity rule on a block, once per block hash and height. */
  private checkBlock(b: Block): void {
    const s = this.s;
    if (s.checking.has(b.hash) || s.valid.has(b.hash)) return;
    s.checking.add(b.hash);
    this.emit({ kind: 'check_block', block: b });
  }

  private once(key: string): boolean {
    if (this.s.done.has(key)) return false;
    this.s.done.add(key);
    return true;
  }

  private quorum(round: number, type: VoteType, hash?: string): boolean {
    return this.s.votes.quorum(round, type, hash);
  }

  /** Evaluate the algorithm's upon-rules against what has arrived. */
  private process(): void {
    const s = this.s;
    if (!s.active) return;
    const h = s.height;
    const r = s.round;
    const { voteMs, deltaMs } = s.config.timeouts;
    // Decide: a block with a precommit quorum in any round: a proposal's, or the locked or valid block
    // (after a restart its proposal is gone, its precommits are sent again; CometBFT likewise commits a
    // block it has with +2/3 precommits, whichever message brought it).
    for (const b of this.candidateBlocks()) {
      if (!s.valid.get(b.hash)) continue;
      for (const round of s.votes.precommitRounds()) {
        if (this.quorum(round, PRECOMMIT, b.hash)) {
          this.emit({ kind: 'commit', block: b, round, precommits: s.votes.precommitsFor(round, b.hash) });
          return;
        }
      }
    }
    const p = s.proposals.get(r);
    const pv = p ? s.valid.get(p.block.hash) : undefined;
    if (s.step === 'propose' && p && pv !== undefined) {
      if (p.pol_round === -1) {
        const ok = pv && (s.lockedRound === -1 || s.lockedHash === p.block.hash);
        this.vote(PREVOTE, ok ? p.block.hash : '');
      } else if (p.pol_round < r && this.quorum(p.pol_round, PREVOTE, p.block.hash)) {
        const ok = pv && (s.lockedRound <= p.pol_round || s.lockedHash === p.block.hash);
        this.vote(PREVOTE, ok ? p.block.hash : '');
      }
    }
    if (s.step === 'prevote' && this.quorum(r, PREVOTE) && this.once(`pvto/${r}`)) {
      this.emit({ kind: 'schedule_timeout', height: h, round: r, step: 'prevote', ms: roundTimeout(voteMs, deltaMs, r) });
    }
    if (p && pv && s.step !== 'propose' && this.quorum(r, PREVOTE, p.block.hash) && this.once(`lock/${r}`)) {
      s.validBlock = p.block;
      s.validRound = r;
      if (s.step === 'prevote') {
        s.lockedHash = p.block.hash;
        s.lockedRound = r;
        s.lockedBlock = p.block;
        // The sign guard keeps the block on disk with the lock (and as the valid block) before signing.
        this.vote(PRECOMMIT, p.block.hash, p.block);
      }
      // Kept on disk like the lock (a no-op when the precommit just recorded it).
      this.emit({ kind: 'keep_valid', height: h, round: r, block: p.block });
    }
    if (s.step === 'prevote' && this.quorum(r, PREVOTE, '')) this.vote(PRECOMMIT, '');
    if (this.quorum(r, PRECOMMIT) && this.once(`pcto/${r}`)) {
      this.emit({ kind: 'schedule_timeout', height: h, round: r, step: 'precommit', ms: roundTimeout(voteMs, deltaMs, r) });
    }
  }

  /** Blocks of the height this node holds: the proposals', the locked and the valid block. */
  private candidateBlocks(): Block[] {
    const s = this.s;
    const blocks = [...s.proposals.values()].map((p) => p.block);
    for (const b of [s.lockedBlock, s.validBlock]) if (b && !blocks.some((x) => x.hash === b.hash)) blocks.push(b);
    return blocks;
  }

  /**
   * Move to the vote's step and ask for it to be signed. The signed vote comes back as a vote input, which
   * counts it and evaluates the rules again. `block`: the block of a non-nil precommit.
   */
  private vote(type: VoteType, blockHash: string, block?: Block): void {
    const s = this.s;
    s.step = type === PREVOTE ? 'prevote' : 'precommit';
    this.emit({ kind: 'sign_vote', type, height: s.height, round: s.round, blockHash, ...(block ? { block } : {}) });
  }

  private timeout(h: number, r: number, step: 'propose' | 'prevote' | 'precommit'): void {
    const s = this.s;
    if (!s.active || h !== s.height || r !== s.round) return;
    if (step === 'propose' && s.step === 'propose') this.vote(PREVOTE, '');
    else if (step === 'prevote' && s.step === 'prevote') this.vote(PRECOMMIT, '');
    else if (step === 'precommit') {
      this.emit({ kind: 'cancel_timeouts' });
      this.startRound(r + 1);
    }
  }
}
