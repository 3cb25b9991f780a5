/** The BFT engine's options, round timeouts and the views of its progress it reports (ts/consensus/bft.ts). */
import type { Block, CheckedBlock, DoubleSignEvidence, Vote } from '../chain/index.js';
import type { PackLimit } from '../execution/index.js';
import type { EvidencePool } from './evidence-pool.js';

/**
 * Round timeouts as multiples of the block time: at 1 s blocks they are CometBFT's defaults (propose 3 s,
 * prevote/precommit 1 s, +0.5 s per round); shorter test block times keep floors so a loaded machine
 * does not time out every round.
 */
export function roundTimeouts(blockTimeMs: number): { proposeMs: number; voteMs: number; deltaMs: number } {
  return {
    proposeMs: Math.max(3 * blockTimeMs, 1500),
    voteMs: Math.max(blockTimeMs, 500),
    deltaMs: Math.max(blockTimeMs / 2, 250),
  };
}

/**
 * Rounds after which a round's timeouts stop growing. Growth lets a slow network find a round long enough
 * to decide in; without a bound, a height that ran 20 rounds under overload (issue 29, "Liveness under
 * overload") kept waiting longer and longer after the overload ended. At 1 s blocks the cap is a 8 s
 * propose and 6 s vote timeout.
 */
export const MAX_TIMEOUT_GROWTH_ROUNDS = 10;

/** A timeout of round r: its base plus the per-round growth, capped at MAX_TIMEOUT_GROWTH_ROUNDS. */
export const roundTimeout = (baseMs: number, deltaMs: number, round: number): number =>
  baseMs + deltaMs * Math.min(round, MAX_TIMEOUT_GROWTH_ROUNDS);

export interface BftOptions {
  blockTimeMs: number;
  maxBlockTxs: number;
  pack?: PackLimit;
  /** Pending double-sign evidence for proposals; absent: blocks carry none. */
  evidence?: EvidencePool;
  /** The block of a proposal that arrived by reference, fetched from the peer that published it. */
  fetchBlock?: (hash: string, from: string) => Promise<Block | null>;
  /** Time and timers of the engine; absent: the system clock (tests drive a manual one). */
  ticker?: Ticker;
  /** Where proposal blocks come from; absent: the chain executes the pool's transactions (proposing.ts). */
  builder?: BlockBuilder;
}

/** The engine's only source of time: wall-clock ms and timers, each cancelled by the function it returns. */
export interface Ticker {
  now(): number;
  /** Run fn once after ms. */
  after(ms: number, fn: () => void): () => void;
  /** Run fn every ms (never keeps the process alive). */
  every(ms: number, fn: () => void): () => void;
}

export const systemTicker: Ticker = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
  every: (ms, fn) => {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
};

/** Builds this validator's proposal block. Consumer: BftEngine, when it proposes and has no valid block. */
export interface BlockBuilder {
  /**
   * A block on the head for round `round`, executed, with its checked outcome (the commit applies it without
   * a second execution). Null when `current()` turns false while it executes (the engine moved on) or the
   * head moved before the seal.
   */
  build(round: number, current: () => boolean): Promise<{ block: Block; checked: CheckedBlock } | null>;
}

export type Step = 'propose' | 'prevote' | 'precommit';

export interface BftStatus {
  height: number;
  round: number;
  step: Step;
  locked_round: number;
  valid_round: number;
  /** Wall-clock ms since this height began (the parent was committed). */
  height_age_ms: number;
}

export interface ResumeInfo {
  height: number;
  round: number;
  locked_round: number;
  locked_hash: string | null;
  /** Whether the locked block itself is at hand (it can be proposed again, served and prevoted). */
  locked_block: boolean;
  valid_round: number;
}

export interface FinalizedInfo {
  height: number;
  round: number;
  /** From the proposal's arrival (or creation, on the proposer) to the commit on this node. */
  proposalToFinalityMs: number | null;
}

/**
 * What the BFT engine reports, each optional (BftEngine.observe). Consumer: the node's networking
 * (ts/node/network.ts: block and evidence gossip, the pool, metrics, logs, test fail points).
 */
export interface BftObserver {
  /** Committed a block this engine decided (the node gossips it and updates the pool). */
  committed?(block: Block): void;
  /** Conflicting votes of one validator for one (height, round, step). */
  evidence?(e: DoubleSignEvidence): void;
  /** A vote this validator signed (persisted first), before it is sent. */
  voteSigned?(v: Vote): void;
  roundStarted?(height: number, round: number): void;
  /** Restarted mid-height: the position, lock and valid block taken back from the persisted sign state. */
  resumed?(info: ResumeInfo): void;
  /** The height has not moved for a while: the node fetches the peers' messages of it (receive them here). */
  stuck?(height: number): void;
  finalized?(info: FinalizedInfo): void;
  /** A step failed (building or committing a block). */
  error?(err: unknown): void;
}
