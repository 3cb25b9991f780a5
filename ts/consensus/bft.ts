import type { Block, Chain, CheckedBlock, VoteType } from '../chain/index.js';
import { PREVOTE, validatorSetAt } from '../chain/index.js';
import type { KeyPair } from '../ledger/index.js';
import type { BlockTxPool } from '../mempool/interface.js';
import {
  type BftOptions,
  type BftObserver,
  type BftStatus,
  type BlockBuilder,
  type Ticker,
  roundTimeouts,
  systemTicker,
} from './bft-options.js';
import {
  type CoreEffect,
  type CoreInput,
  type CoreResume,
  type CoreState,
  blockOf,
  initialState,
  messagesOf,
  proposerOf,
  step,
  verifyProposal,
} from './bft-core.js';
import { type ConsensusMessage, type Proposal, type ProposalRef, messageHeight } from './messages.js';
import { STEP_PRECOMMIT, STEP_PREVOTE, STEP_PROPOSE, type SignGuard } from './privval.js';
import { chainBlockBuilder, commitDecided, reusePoolTransactions, signProposal, signVote, untilSlot } from './proposing.js';
export { type ConsensusMessage, InvalidConsensusMessage, type Proposal } from './messages.js';
export {
  type BftObserver,
  type BftOptions,
  type BftStatus,
  type FinalizedInfo,
  type ResumeInfo,
  roundTimeouts,
} from './bft-options.js';

/**
 * Tendermint consensus (arXiv 1807.04938, Algorithm 1) for the DPoS+BFT phase: rounds of propose,
 * prevote and precommit with locking and valid-round rules, the proposer (height + round) mod n over the
 * validators sorted by address, timeouts growing per round, and a block final when precommits carrying
 * at least 3/4 of the active voting power agree on it in one round (they become its justification).
 * The rules live in the deterministic core (bft-core.ts); this class is its driver: it owns the timers
 * (through a Ticker), the chain, the sign guard, block building (a BlockBuilder) and the network's
 * broadcast, feeds every input to the core and carries out the effects it returns.
 * Every proposal is checked with the block-validity rule (executed on an overlay) before this validator
 * prevotes for it, and the checked outcome is what the commit applies: a block executes once per node.
 * Round 0 proposals go out on block-time slot boundaries, so blocks come one per slot. A SignGuard
 * persists each signature's position first, so nothing conflicting is ever signed.
 */
export class BftEngine {
  readonly name = 'DPoS+BFT';
  private core: CoreState;
  /** Checked outcomes of the height's blocks (the commit applies them without a second execution). */
  private checked = new Map<string, CheckedBlock>();
  /** When each proposal block of the height arrived (or was built here): finality metric, next slot. */
  private proposalSeenAt = new Map<string, number>();
  private timers: (() => void)[] = [];
  private future: { m: ConsensusMessage; from: string }[] = [];
  /** Block fetches the input being received asked for (receive resolves once they are done). */
  private fetches: Promise<void>[] = [];
  private stopped = true;
  private deciding = false;
  private heightStartedAt = 0;
  private readonly timeouts: ReturnType<typeof roundTimeouts>;
  private readonly ticker: Ticker;
  private readonly builder: BlockBuilder;
  private stopStuckCheck: (() => void) | null = null;
  private observer: BftObserver = {};

  constructor(
    private readonly chain: Chain,
    private readonly mempool: BlockTxPool,
    private readonly key: KeyPair,
    private readonly opts: BftOptions,
    private readonly guard: SignGuard,
    private readonly broadcast: (m: ConsensusMessage) => void,
  ) {
    this.timeouts = roundTimeouts(opts.blockTimeMs);
    this.ticker = opts.ticker ?? systemTicker;
    this.builder = opts.builder ?? chainBlockBuilder(chain, mempool, key, opts);
    this.core = initialState({ chainId: chain.params.chainId, me: key.address, timeouts: this.timeouts });
  }

  /** Where the engine reports (replaces any observer set before). */
  observe(observer: BftObserver): void {
    this.observer = observer;
  }

  get state(): BftStatus {
    const c = this.core;
    return {
      height: c.height,
      round: c.round,
      step: c.step,
      locked_round: c.lockedRound,
      valid_round: c.validRound,
      height_age_ms: this.ticker.now() - this.heightStartedAt,
    };
  }

  /** Every proposal and vote this node holds for a height (only the height being decided), for peers. */
  messagesAt(height: number): ConsensusMessage[] {
    return height === this.core.height ? messagesOf(this.core) : [];
  }

  /** Proposer of the current (height, round). */
  currentProposer(): string | null {
    return proposerOf(this.core, this.core.round);
  }

  /**
   * The proposal block with this hash at the current height, or the locked or valid block (peers fetch
   * blocks of proposals by reference, and the blocks of precommits whose proposal they lost in a restart).
   */
  proposalBlock(hash: string): Block | null {
    return blockOf(this.core, hash);
  }

  start(): void {
    this.stopped = false;
    this.chain.on('block', this.onHead);
    this.onHead();
    // Gossip delivers each message once; a validator that restarted or was cut off missed them. While a
    // height does not move, ask the peers for what they hold of it (CometBFT's consensus reactor sends
    // each peer the votes it lacks; here the stuck node pulls them).
    const stuckMs = Math.max(2 * this.opts.blockTimeMs, this.timeouts.proposeMs);
    this.stopStuckCheck = this.ticker.every(Math.max(1000, this.opts.blockTimeMs), () => {
      if (this.ticker.now() - this.heightStartedAt > stuckMs && this.core.active) this.observer.stuck?.(this.core.height);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopStuckCheck?.();
    this.chain.off('block', this.onHead);
    this.clearTimers();
  }

  private readonly onHead = (): void => {
    if (this.stopped) return;
    const h = this.chain.height + 1;
    if (h <= this.core.height && this.core.height !== 0) return;
    // When the block just committed was proposed (here or elsewhere): the next proposal is due one slot later.
    const parentProposedAt = this.proposalSeenAt.get(this.chain.head.hash);
    this.checked.clear();
    this.proposalSeenAt.clear();
    const now = this.ticker.now();
    this.heightStartedAt = now;
    const resume = resumeFromSignState(this.guard, h);
    this.dispatch({
      kind: 'start_height',
      height: h,
      validators: validatorSetAt(this.chain.params, this.chain.state, h),
      active: this.chain.consensusAt(h) === 'DPoS+BFT',
      // After a restart the parent's proposal time is unknown: the next slot boundary.
      slotWaitMs: untilSlot(this.opts.blockTimeMs, resume ? undefined : parentProposedAt, now),
      resume,
    });
    if (!this.core.active) return;
    const pending = this.future.filter((x) => messageHeight(x.m) === h);
    this.future = [];
    for (const x of pending) void this.receive(x.m, x.from).catch(() => undefined);
  };

  /** Feed one input to the core and carry out its effects, in order (an effect may feed inputs back). */
  private dispatch(input: CoreInput): void {
    if (this.stopped) return;
    const { state, effects } = step(this.core, input);
    this.core = state;
    for (const e of effects) this.execute(e);
  }

  private execute(e: CoreEffect): void {
    switch (e.kind) {
      case 'round_started':
        this.observer.roundStarted?.(e.height, e.round);
        return;
      case 'resumed':
        this.observer.resumed?.(e.info);
        return;
      case 'cancel_timeouts':
        this.clearTimers();
        return;
      case 'schedule_timeout':
        this.schedule(e.ms, () => this.dispatch({ kind: 'timeout', height: e.height, round: e.round, step: e.step }));
        return;
      case 'propose': {
        // Not in this tick: the commit that started the height updates the mempool once its event is handled.
        const sendAt = this.ticker.now() + e.sendInMs;
        this.schedule(0, () => void this.propose(e.height, e.round, e.block, sendAt).catch((err) => this.observer.error?.(err)));
        return;
      }
      case 'sign_proposal':
        this.signProposal(e.height, e.round, e.polRound, e.block);
        return;
      case 'sign_vote':
        this.signVote(e);
        return;
      case 'resend_vote': {
        const vote = signVote(this.chain.params.chainId, this.key, {
          type: e.type,
          height: e.height,
          round: e.round,
          block_hash: e.blockHash,
        });
        this.broadcast({ kind: 'vote', vote });
        this.dispatch({ kind: 'vote', vote });
        return;
      }
      case 'keep_valid':
        this.guard.keepValid(e.height, e.round, e.block);
        return;
      case 'fetch_block':
        this.fetches.push(this.fetchBlock(e.ref, e.from));
        return;
      case 'check_block':
        this.checkBlock(e.block);
        return;
      case 'commit':
        void this.decide(e.block, e.round, e.precommits);
        return;
      case 'evidence':
        this.observer.evidence?.(e.evidence);
        return;
    }
  }

  private clearTimers(): void {
    for (const cancel of this.timers) cancel();
    this.timers = [];
  }

  private schedule(ms: number, fn: () => void): void {
    this.timers.push(
      this.ticker.after(ms, () => {
        if (!this.stopped) fn();
      }),
    );
  }

  /** Build the block now (round 0: the transactions that arrived during the last slot) and send it at the slot. */
  private async propose(h: number, r: number, validBlock: Block | null, sendAt: number): Promise<void> {
    let block = validBlock;
    if (!block) {
      const current = () => h === this.core.height && r === this.core.round;
      const built = await this.builder.build(r, current);
      if (!built) return;
      block = built.block;
      this.checked.set(block.hash, built.checked);
      this.dispatch({ kind: 'block_built', height: h, round: r, block });
    }
    const delay = sendAt - this.ticker.now();
    const due = block;
    if (delay > 0) this.ticker.after(delay, () => this.dispatch({ kind: 'proposal_due', height: h, round: r, block: due }));
    else this.dispatch({ kind: 'proposal_due', height: h, round: r, block: due });
  }

  private signProposal(h: number, r: number, polRound: number, block: Block): void {
    if (!this.guard.allow(h, r, STEP_PROPOSE, block.hash)) return;
    const proposal = signProposal(this.chain.params.chainId, this.key, h, r, polRound, block);
    this.broadcast({ kind: 'proposal', proposal });
    void this.receive({ kind: 'proposal', proposal }, '').catch((err) => this.observer.error?.(err));
  }

  private signVote(e: Extract<CoreEffect, { kind: 'sign_vote' }>): void {
    const body = guardedVote(this.guard, e);
    if (!body) return;
    const vote = signVote(this.chain.params.chainId, this.key, body);
    this.observer.voteSigned?.(vote);
    this.broadcast({ kind: 'vote', vote });
    this.dispatch({ kind: 'vote', vote });
  }

  /** A proposal or vote from a peer (or this node). Throws InvalidConsensusMessage for forged ones. */
  async receive(m: ConsensusMessage, from: string): Promise<void> {
    if (this.stopped) return;
    const h = messageHeight(m);
    if (h === this.core.height + 1 && this.future.length < 1000) {
      this.future.push({ m, from });
      return;
    }
    if (h !== this.core.height || !this.core.active) return;
    if (m.kind === 'vote') this.dispatch({ kind: 'vote', vote: m.vote });
    else if (m.kind === 'proposal') this.addProposal(m.proposal);
    else if (!this.opts.fetchBlock) verifyProposal(this.core, m.ref, m.ref.block_hash);
    else {
      const round = m.ref.round;
      const fresh = !this.core.proposals.has(round);
      this.dispatch({ kind: 'proposal_ref', ref: m.ref, from });
      if (fresh) this.noteProposalSeen(round);
      // Answered once its block is here (gossip relays the reference only then).
      const fetches = this.fetches;
      this.fetches = [];
      await Promise.all(fetches);
    }
  }

  private addProposal(p: Proposal): void {
    const fresh = !this.core.proposals.has(p.round);
    this.dispatch({ kind: 'proposal', proposal: p });
    if (fresh) this.noteProposalSeen(p.round);
  }

  /** When a round's proposal was taken in (finality time, the next height's slot). */
  private noteProposalSeen(round: number): void {
    const hash = this.core.proposals.get(round)?.block.hash;
    if (hash !== undefined && !this.proposalSeenAt.has(hash)) this.proposalSeenAt.set(hash, this.ticker.now());
  }

  /** The block of a proposal that came by reference, from the peer that sent it; then the proposal itself. */
  private async fetchBlock(ref: ProposalRef, from: string): Promise<void> {
    const block = await this.opts.fetchBlock?.(ref.block_hash, from);
    if (!block || block.hash !== ref.block_hash || ref.height !== this.core.height) return;
    const { block_hash: _, ...rest } = ref;
    this.addProposal({ ...rest, block });
  }

  /** The block-validity rule on a proposal (executed on an overlay, then dropped); the core asks once per hash. */
  private checkBlock(b: Block): void {
    // A proposal's transactions this pool admitted already: their signatures need no second check.
    reusePoolTransactions(this.mempool, b);
    void this.chain
      .checkProposal(b)
      .then((checked) => {
        if (b.index === this.core.height) this.checked.set(b.hash, checked);
        return true;
      })
      .catch(() => false)
      .then((valid) => this.dispatch({ kind: 'block_checked', height: b.index, hash: b.hash, valid }));
  }

  /** Attach the precommits as the justification and commit the checked outcome (no second execution). */
  private async decide(block: Block, round: number, precommits: { validator: string; signature: string }[]): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    try {
      // Read before the commit: the head it moves starts the next height, which clears them.
      const seenAt = this.proposalSeenAt.get(block.hash);
      const final = await commitDecided(this.chain, block, round, precommits, this.checked.get(block.hash));
      if (!final) return; // imported meanwhile (sync)
      this.observer.finalized?.({
        height: final.index,
        round,
        proposalToFinalityMs: seenAt === undefined ? null : this.ticker.now() - seenAt,
      });
      this.observer.committed?.(final);
    } catch (err) {
      if (this.chain.height >= block.index) return;
      this.observer.error?.(err);
    } finally {
      this.deciding = false;
    }
  }
}

/**
 * Where this validator was at `height` before a restart, from its persisted sign state (undefined: it
 * signed nothing there), with the blocks its lock and valid block name read back from disk. A lock is
 * also a valid block of its round (an older state file kept only the lock).
 */
export function resumeFromSignState(guard: SignGuard, height: number): CoreResume | undefined {
  const last = guard.last;
  if (last.height !== height) return undefined;
  const valid = last.valid ?? last.lock;
  const validBlock = valid ? guard.keptBlock(valid.block_hash) : null;
  return {
    round: last.round,
    step: last.step,
    block_hash: last.block_hash,
    lock: last.lock,
    lockedBlock: last.lock ? guard.keptBlock(last.lock.block_hash) : null,
    valid: valid && validBlock ? { round: valid.round, block: validBlock } : null,
    votes: last.votes ?? [],
  };
}

/**
 * The vote to sign for a sign_vote effect, as the sign guard allows it (its position persisted first):
 * the requested one, or, when this very position was signed before a restart, that same vote again
 * (never a second one); null when the guard refuses (an earlier position).
 */
export function guardedVote(
  guard: SignGuard,
  e: Extract<CoreEffect, { kind: 'sign_vote' }>,
): { type: VoteType; height: number; round: number; block_hash: string } | null {
  const { type, height, round } = e;
  const position = type === PREVOTE ? STEP_PREVOTE : STEP_PRECOMMIT;
  if (guard.allow(height, round, position, e.blockHash, e.block)) return { type, height, round, block_hash: e.blockHash };
  const last = guard.last;
  if (last.height !== height || last.round !== round || last.step !== position) return null;
  return { type, height, round, block_hash: last.block_hash };
}
