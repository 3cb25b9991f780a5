/**
 * The data of the BFT core (bft-core.ts): its state, the inputs that drive it and the effects it asks its
 * driver (bft.ts) to carry out. Everything here is plain data: no clock, no timer, no network, no chain.
 */
import type { ActiveValidator, Block, DoubleSignEvidence, Vote, VoteType } from '../chain/index.js';
import type { ResumeInfo, Step } from './bft-options.js';
import type { Proposal, ProposalRef } from './messages.js';
import type { HeightVotes } from './vote-set.js';

/** What the core is fixed with for its whole life (the node's chain, key and block time). */
export interface CoreConfig {
  chainId: number;
  /** This validator's address. */
  me: string;
  /** Round timeouts (roundTimeouts(blockTimeMs)); round r waits base + delta * min(r, cap). */
  timeouts: { proposeMs: number; voteMs: number; deltaMs: number };
}

/**
 * The core's state of one height (Tendermint's Algorithm 1 variables, CometBFT's RoundState). The step
 * function updates it in place and returns it: the caller keeps only the returned object.
 */
export interface CoreState {
  readonly config: CoreConfig;
  height: number;
  round: number;
  step: Step;
  /** Whether this node votes at the height (a validator of its set, and the height runs BFT). */
  active: boolean;
  /** The height's validator set in proposer order: the proposer of round r is set[(height + r) % n]. */
  validators: readonly ActiveValidator[];
  lockedRound: number;
  lockedHash: string | null;
  /** The locked block itself (null when its proposal is gone and the lock came from an older state file). */
  lockedBlock: Block | null;
  validRound: number;
  validBlock: Block | null;
  /** The first proposal of each round. */
  proposals: Map<number, Proposal>;
  votes: HeightVotes;
  /** Blocks whose validity check was asked for (checkBlock effect) and has not come back. */
  checking: Set<string>;
  /** The outcome of the block-validity rule per block hash. */
  valid: Map<string, boolean>;
  /** Upon-rules that fire once per round (`pvto/r`, `lock/r`, `pcto/r`). */
  done: Set<string>;
}

/** Where a restarted validator was at the height it resumes (its persisted sign state, read by the driver). */
export interface CoreResume {
  round: number;
  /** Step of the last signature (privval STEP_*), 0 when only the valid block was recorded. */
  step: number;
  block_hash: string;
  lock?: { round: number; block_hash: string };
  /** The locked block read back from disk (null: not kept). */
  lockedBlock: Block | null;
  /** The valid block (or the lock, for an older state file) and its round; null: none or not kept. */
  valid: { round: number; block: Block } | null;
  /** Every vote signed at the height, in signing order. */
  votes: { round: number; step: number; block_hash: string }[];
}

export type TimeoutStep = 'propose' | 'prevote' | 'precommit';

/** What happens to the core: messages, timeouts and the outcomes of the effects it asked for. */
export type CoreInput =
  /** The chain's head moved: decide `height` next (its validators and whether this node votes). */
  | {
      kind: 'start_height';
      height: number;
      validators: readonly ActiveValidator[];
      active: boolean;
      /** Milliseconds until round 0's proposal is due (the block-time slot). */
      slotWaitMs: number;
      /** Set when this validator signed at this height before a restart. */
      resume?: CoreResume;
    }
  /** A proposal with its block (from a peer, or this node's own once signed). Its signature is checked here. */
  | { kind: 'proposal'; proposal: Proposal }
  /**
   * A proposal whose block travels separately, from peer `from`. Its signature is checked here; a block not
   * at hand is asked for (fetch_block) and comes back as a proposal input.
   */
  | { kind: 'proposal_ref'; ref: ProposalRef; from: string }
  /** A vote (from a peer, or this node's own once signed). Its signature is checked here. */
  | { kind: 'vote'; vote: Vote }
  /** A timer the core scheduled has fired. */
  | { kind: 'timeout'; height: number; round: number; step: TimeoutStep }
  /** The block-validity rule's outcome for a block the core asked to check. */
  | { kind: 'block_checked'; height: number; hash: string; valid: boolean }
  /** The driver built this node's proposal block (it is valid: this node executed it). */
  | { kind: 'block_built'; height: number; round: number; block: Block }
  /** The slot of this node's proposal has come: sign it, if the round is still waiting for it. */
  | { kind: 'proposal_due'; height: number; round: number; block: Block };

/** What the core asks its driver to do, in order. */
export type CoreEffect =
  | { kind: 'round_started'; height: number; round: number }
  | { kind: 'resumed'; info: ResumeInfo }
  /** Drop every timer scheduled so far (a new round or height began). */
  | { kind: 'cancel_timeouts' }
  | { kind: 'schedule_timeout'; height: number; round: number; step: TimeoutStep; ms: number }
  /**
   * This node proposes (height, round): with `block` (the valid block), or a block the driver builds
   * (answered with block_built). Either way the driver answers with proposal_due after `sendInMs`.
   */
  | { kind: 'propose'; height: number; round: number; block: Block | null; sendInMs: number }
  /** Sign this proposal through the sign guard, broadcast it, and feed it back as a proposal input. */
  | { kind: 'sign_proposal'; height: number; round: number; polRound: number; block: Block }
  /**
   * Sign this vote through the sign guard (which may refuse it, or answer with the vote it signed at this
   * very position before a restart), broadcast it and feed it back as a vote input. `block`: the block of
   * a non-nil precommit, kept on disk with the lock.
   */
  | { kind: 'sign_vote'; type: VoteType; height: number; round: number; blockHash: string; block?: Block }
  /** Send again a vote signed before a restart (already recorded by the sign guard), and feed it back. */
  | { kind: 'resend_vote'; type: VoteType; height: number; round: number; blockHash: string }
  /** Keep this block on disk as the valid block of (height, round), before anything is signed for it. */
  | { kind: 'keep_valid'; height: number; round: number; block: Block }
  /** Fetch the block of this proposal from peer `from` (answered with a proposal input carrying it). */
  | { kind: 'fetch_block'; ref: ProposalRef; from: string }
  /** Run the block-validity rule on a proposal's block (answered with block_checked). */
  | { kind: 'check_block'; block: Block }
  /** A precommit quorum decided `block` in `round`: commit it with these precommits as its justification. */
  | { kind: 'commit'; block: Block; round: number; precommits: { validator: string; signature: string }[] }
  /** Two conflicting votes of one validator at one position. */
  | { kind: 'evidence'; evidence: DoubleSignEvidence };
