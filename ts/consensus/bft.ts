import type { Block, Chain, CheckedBlock, DoubleSignEvidence, Vote, VoteType } from '../chain/index.js';
import { PRECOMMIT, PREVOTE, proposerAt, validatorSetAt } from '../chain/index.js';
import type { KeyPair } from '../ledger/index.js';
import type { BftOptions, BftStatus, FinalizedInfo, ResumeInfo, Step } from './bft-options.js';
import { roundTimeout, roundTimeouts } from './bft-options.js';
import { type ConsensusMessage, type Proposal, type ProposalRef, messageHeight } from './messages.js';
import { STEP_PRECOMMIT, STEP_PREVOTE, STEP_PROPOSE, type SignGuard } from './privval.js';
import { buildProposalBlock, commitDecided, reusePoolTransactions, signProposal, signVote, untilSlot } from './proposing.js';
import { verifyProposalSignature } from './verify-message.js';
import { HeightVotes } from './vote-set.js';
export { type ConsensusMessage, InvalidConsensusMessage, type Proposal } from './messages.js';
export { type BftOptions, type BftStatus, type FinalizedInfo, type ResumeInfo, roundTimeouts } from './bft-options.js';
import type { BlockTxPool } from '../mempool/interface.js';

/**
 * Tendermint consensus (arXiv 1807.04938, Algorithm 1) for the DPoS+BFT phase: rounds of propose,
 * prevote and precommit with locking and valid-round rules, the proposer (height + round) mod n over the
 * validators sorted by address, timeouts growing per round, and a block final when precommits carrying
 * at least 3/4 of the active voting power agree on it in one round (they become its justification).
 * Every proposal is checked with the block-validity rule (executed on an overlay) before this validator
 * prevotes for it, and the checked outcome is what the commit applies: a block executes once per node.
 * Round 0 proposals go out on block-time slot boundaries, so blocks come one per slot. A SignGuard
 * persists each signature's position first, so nothing conflicting is ever signed.
 */
export class BftEngine {
  readonly name = 'DPoS+BFT';
  private height = 0;
  private round = 0;
  private step: Step = 'propose';
  private lockedRound = -1;
  private lockedHash: string | null = null;
  /** The locked block itself (null when its proposal is gone and the lock came from an older state file). */
  private lockedBlock: Block | null = null;
  private validRound = -1;
  private validBlock: Block | null = null;
  private proposals = new Map<number, Proposal>();
  private votes = new HeightVotes(0, []);
  private checking = new Map<string, Promise<boolean>>();
  private valid = new Map<string, boolean>();
  private checked = new Map<string, CheckedBlock>();
  private proposalSeenAt = new Map<string, number>();
  private done = new Set<string>();
  private timers: NodeJS.Timeout[] = [];
  private future: { m: ConsensusMessage; from: string }[] = [];
  private stopped = true;
  private deciding = false;
  private heightStartedAt = 0;
  private readonly timeouts: ReturnType<typeof roundTimeouts>;
  private regossip: NodeJS.Timeout | null = null;
  onError?: (err: unknown) => void;
  /** Committed a block this engine decided (the node gossips it and updates the pool). */
  onCommitted?: (block: Block) => void;
  /** Conflicting votes of one validator for one (height, round, step). */
  onEvidence?: (e: DoubleSignEvidence) => void;
  /** A vote this validator signed (persisted first), before it is sent. */
  onVoteSigned?: (v: Vote) => void;
  onRound?: (height: number, round: number) => void;
  /** Restarted mid-height: the position, lock and valid block taken back from the persisted sign state. */
  onResume?: (info: ResumeInfo) => void;
  /** The height has not moved for a while: the node fetches the peers' messages of it (receive them here). */
  onStuck?: (height: number) => void;
  onFinalized?: (info: FinalizedInfo) => void;

  constructor(
    private readonly chain: Chain,
    private readonly mempool: BlockTxPool,
    private readonly key: KeyPair,
    private readonly opts: BftOptions,
    private readonly guard: SignGuard,
    private readonly broadcast: (m: ConsensusMessage) => void,
  ) {
    this.timeouts = roundTimeouts(opts.blockTimeMs);
  }

  get state(): BftStatus {
    return {
      height: this.height,
      round: this.round,
      step: this.step,
      locked_round: this.lockedRound,
      valid_round: this.validRound,
      height_age_ms: Date.now() - this.heightStartedAt,
    };
  }

  /** Every proposal and vote this node holds for a height (only the height being decided), for peers. */
  messagesAt(height: number): ConsensusMessage[] {
    if (height !== this.height) return [];
    const proposals = [...this.proposals.values()].map((proposal): ConsensusMessage => ({ kind: 'proposal', proposal }));
    return [...proposals, ...this.votes.all().map((vote): ConsensusMessage => ({ kind: 'vote', vote }))];
  }

  /** Proposer of the current (height, round). */
  currentProposer(): string | null {
    return proposerAt(this.chain.params, this.chain.state, this.height, this.round)?.address ?? null;
  }

  /**
   * The proposal block with this hash at the current height, or the locked or valid block (peers fetch
   * blocks of proposals by reference, and the blocks of precommits whose proposal they lost in a restart).
   */
  proposalBlock(hash: string): Block | null {
    for (const p of this.proposals.values()) if (p.block.hash === hash) return p.block;
    for (const b of [this.validBlock, this.lockedBlock]) if (b?.hash === hash) return b;
    return null;
  }

  start(): void {
    this.stopped = false;
    this.chain.on('block', this.onHead);
    this.onHead();
    // Gossip delivers each message once; a validator that restarted or was cut off missed them. While a
    // height does not move, ask the peers for what they hold of it (CometBFT's consensus reactor sends
    // each peer the votes it lacks; here the stuck node pulls them).
    const stuckMs = Math.max(2 * this.opts.blockTimeMs, this.timeouts.proposeMs);
    this.regossip = setInterval(
      () => {
        if (Date.now() - this.heightStartedAt > stuckMs && this.active(this.height)) this.onStuck?.(this.height);
      },
      Math.max(1000, this.opts.blockTimeMs),
    );
    this.regossip.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.regossip) clearInterval(this.regossip);
    this.chain.off('block', this.onHead);
    this.clearTimers();
  }

  /** Whether this node takes part at a height (a validator there, and the height runs BFT). */
  private active(height: number): boolean {
    return this.chain.consensusAt(height) === 'DPoS+BFT' && this.votes.has(this.key.address);
  }

  private readonly onHead = (): void => {
    if (this.stopped) return;
    const h = this.chain.height + 1;
    if (h <= this.height && this.height !== 0) return;
    this.clearTimers();
    // When the block just committed was proposed (here or elsewhere): the next proposal is due one slot later.
    const parentProposedAt = this.proposalSeenAt.get(this.chain.head.hash);
    this.height = h;
    this.lockedRound = -1;
    this.lockedHash = null;
    this.lockedBlock = null;
    this.validRound = -1;
    this.validBlock = null;
    this.proposals.clear();
    this.votes = new HeightVotes(this.chain.params.chainId, validatorSetAt(this.chain.params, this.chain.state, h));
    this.checking.clear();
    this.valid.clear();
    this.checked.clear();
    this.proposalSeenAt.clear();
    this.done.clear();
    this.heightStartedAt = Date.now();
    this.round = 0;
    this.step = 'propose';
    if (!this.active(h)) return;
    // After a restart mid-height, resume where the signature state says this validator was: keep its
    // lock, rejoin its round, and send its last vote again (the identical vote; never a second one).
    const last = this.guard.last;
    if (last.height === h) {
      this.restoreLock();
      this.onResume?.({
        height: h,
        round: last.round,
        locked_round: this.lockedRound,
        locked_hash: this.lockedHash,
        locked_block: this.lockedHash !== null && this.proposalBlock(this.lockedHash) !== null,
        valid_round: this.validRound,
      });
      this.startRound(last.round);
      // Every earlier vote of the height first (the last one is sent by vote() below, which also sets the step).
      for (const v of last.votes ?? []) {
        if (v.round === last.round && v.step === last.step) continue;
        this.resend(v.step === STEP_PREVOTE ? PREVOTE : PRECOMMIT, v.round, v.block_hash);
      }
      if (last.step === STEP_PREVOTE) this.vote(PREVOTE, last.block_hash);
      else if (last.step === STEP_PRECOMMIT) {
        this.step = 'prevote';
        this.vote(PRECOMMIT, last.block_hash);
      }
    } else this.startRound(0, parentProposedAt);
    const pending = this.future.filter((x) => messageHeight(x.m) === h);
    this.future = [];
    for (const x of pending) void this.receive(x.m, x.from).catch(() => undefined);
  };

  /**
   * Take the lock and the valid block of the height back from the sign state, with their blocks: the
   * validator proposes the valid block again when it is the proposer (Tendermint: propose validValue),
   * prevotes for the locked one when it comes back, serves both by hash, and can decide either once it
   * sees a precommit quorum for it. A lock is also a valid block of its round (an older state file kept
   * only the lock).
   */
  private restoreLock(): void {
    const last = this.guard.last;
    if (last.lock) {
      this.lockedRound = last.lock.round;
      this.lockedHash = last.lock.block_hash;
      this.lockedBlock = this.guard.keptBlock(last.lock.block_hash);
    }
    const valid = last.valid ?? last.lock;
    const validBlock = valid ? this.guard.keptBlock(valid.block_hash) : null;
    if (valid && validBlock) {
      this.validRound = valid.round;
      this.validBlock = validBlock;
    }
    for (const b of [this.lockedBlock, this.validBlock]) if (b) void this.checkValid(b);
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  private schedule(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      if (!this.stopped) fn();
    }, ms);
    this.timers.push(t);
  }

  private startRound(r: number, parentProposedAt?: number): void {
    this.round = r;
    this.step = 'propose';
    const h = this.height;
    this.onRound?.(h, r);
    const wait = r === 0 ? untilSlot(this.opts.blockTimeMs, parentProposedAt) : 0;
    const proposer = proposerAt(this.chain.params, this.chain.state, h, r);
    if (proposer?.address === this.key.address) {
      // Not in this tick: the commit that started the height updates the mempool once its event is handled.
      const started = Date.now();
      this.schedule(0, () => void this.propose(h, r, wait - (Date.now() - started)).catch((err) => this.onError?.(err)));
    }
    this.schedule(wait + roundTimeout(this.timeouts.proposeMs, this.timeouts.deltaMs, r), () => this.onTimeoutPropose(h, r));
    this.process();
  }

  /** Build the block now (round 0: the transactions that arrived during the last slot) and send it at the slot. */
  private async propose(h: number, r: number, waitMs: number): Promise<void> {
    const sendAt = Date.now() + waitMs;
    let block = this.validBlock;
    if (!block) {
      const current = () => h === this.height && r === this.round;
      const built = await buildProposalBlock(this.chain, this.mempool, this.key, this.opts, r, current);
      if (!built) return;
      block = built.block;
      this.valid.set(block.hash, true);
      this.checked.set(block.hash, built.checked);
    }
    const delay = sendAt - Date.now();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if (this.stopped || h !== this.height || r !== this.round || this.step !== 'propose') return;
    if (!this.guard.allow(h, r, STEP_PROPOSE, block.hash)) return;
    const proposal = signProposal(this.chain.params.chainId, this.key, h, r, this.validRound, block);
    this.broadcast({ kind: 'proposal', proposal });
    await this.receive({ kind: 'proposal', proposal }, '');
  }

  /** A proposal or vote from a peer (or this node). Throws InvalidConsensusMessage for forged ones. */
  async receive(m: ConsensusMessage, from: string): Promise<void> {
    if (this.stopped) return;
    const h = messageHeight(m);
    if (h === this.height + 1 && this.future.length < 1000) {
      this.future.push({ m, from });
      return;
    }
    if (h !== this.height || !this.active(h)) return;
    if (m.kind === 'vote') this.addVote(m.vote);
    else if (m.kind === 'proposal') await this.addProposal(m.proposal);
    else await this.addProposalRef(m.ref, from);
    this.process();
  }

  private addVote(v: Vote): void {
    const added = this.votes.add(v);
    if (added === 'known') return;
    if (added !== 'added') {
      this.onEvidence?.(added);
      return;
    }
    // Round skip: more than 1/4 of the voting power is already in a later round.
    if (v.round > this.round && this.votes.roundHasMoreThanFaulty(v.round)) {
      this.clearTimers();
      this.startRound(v.round);
    }
  }

  private async addProposal(p: Proposal): Promise<void> {
    verifyProposalSignature(this.chain, p, p.block.hash);
    if (this.proposals.has(p.round)) return;
    reusePoolTransactions(this.mempool, p.block);
    this.proposals.set(p.round, p);
    if (!this.proposalSeenAt.has(p.block.hash)) this.proposalSeenAt.set(p.block.hash, Date.now());
    // Not awaited: the message is relayed as soon as its signature checks out; process() runs again
    // when the block's check is done.
    void this.checkValid(p.block);
  }

  private async addProposalRef(ref: ProposalRef, from: string): Promise<void> {
    verifyProposalSignature(this.chain, ref, ref.block_hash);
    if (this.proposals.has(ref.round) || !this.opts.fetchBlock) return;
    const block = this.proposalBlock(ref.block_hash) ?? (await this.opts.fetchBlock(ref.block_hash, from));
    if (!block || block.hash !== ref.block_hash || ref.height !== this.height) return;
    const { block_hash: _, ...rest } = ref;
    await this.addProposal({ ...rest, block });
  }

  /** The block-validity rule on a proposal (executed on an overlay, then dropped), once per block hash. */
  private checkValid(b: Block): Promise<boolean> {
    let v = this.checking.get(b.hash);
    if (!v) {
      if (this.valid.has(b.hash)) return Promise.resolve(this.valid.get(b.hash) as boolean);
      v = this.chain
        .checkProposal(b)
        .then((checked) => {
          if (b.index === this.height) this.checked.set(b.hash, checked);
          return true;
        })
        .catch(() => false)
        .then((ok) => {
          if (b.index === this.height) {
            this.valid.set(b.hash, ok);
            this.process();
          }
          return ok;
        });
      this.checking.set(b.hash, v);
    }
    return v;
  }

  private quorum(round: number, type: VoteType, hash?: string): boolean {
    return this.votes.quorum(round, type, hash);
  }

  private once(key: string): boolean {
    if (this.done.has(key)) return false;
    this.done.add(key);
    return true;
  }

  /** Evaluate the algorithm's upon-rules against what has arrived. */
  private process(): void {
    if (this.stopped || !this.active(this.height)) return;
    const h = this.height;
    const r = this.round;
    const { voteMs, deltaMs } = this.timeouts;
    // Decide: a block with a precommit quorum in any round: a proposal's, or the locked or valid block
    // (after a restart its proposal is gone, its precommits are sent again; CometBFT likewise commits a
    // block it has with +2/3 precommits, whichever message brought it).
    for (const b of this.candidateBlocks()) {
      if (!this.valid.get(b.hash)) continue;
      for (const round of this.votes.precommitRounds()) {
        if (this.quorum(round, PRECOMMIT, b.hash)) {
          void this.decide(b, round);
          return;
        }
      }
    }
    const p = this.proposals.get(r);
    const pv = p ? this.valid.get(p.block.hash) : undefined;
    if (this.step === 'propose' && p && pv !== undefined) {
      if (p.pol_round === -1) {
        const ok = pv && (this.lockedRound === -1 || this.lockedHash === p.block.hash);
        this.vote(PREVOTE, ok ? p.block.hash : '');
      } else if (p.pol_round < r && this.quorum(p.pol_round, PREVOTE, p.block.hash)) {
        const ok = pv && (this.lockedRound <= p.pol_round || this.lockedHash === p.block.hash);
        this.vote(PREVOTE, ok ? p.block.hash : '');
      }
    }
    if (this.step === 'prevote' && this.quorum(r, PREVOTE) && this.once(`pvto/${r}`)) {
      this.schedule(roundTimeout(voteMs, deltaMs, r), () => this.onTimeoutPrevote(h, r));
    }
    if (p && pv && this.step !== 'propose' && this.quorum(r, PREVOTE, p.block.hash) && this.once(`lock/${r}`)) {
      this.validBlock = p.block;
      this.validRound = r;
      if (this.step === 'prevote') {
        this.lockedHash = p.block.hash;
        this.lockedRound = r;
        this.lockedBlock = p.block;
        // The sign guard keeps the block on disk with the lock (and as the valid block) before signing.
        this.vote(PRECOMMIT, p.block.hash, p.block);
      }
      // Kept on disk like the lock (a no-op when the precommit just recorded it).
      this.guard.keepValid(h, r, p.block);
    }
    if (this.step === 'prevote' && this.quorum(r, PREVOTE, '')) this.vote(PRECOMMIT, '');
    if (this.quorum(r, PRECOMMIT) && this.once(`pcto/${r}`)) {
      this.schedule(roundTimeout(voteMs, deltaMs, r), () => this.onTimeoutPrecommit(h, r));
    }
  }

  /** Blocks of the height this node holds: the proposals', the locked and the valid block. */
  private candidateBlocks(): Block[] {
    const blocks = [...this.proposals.values()].map((p) => p.block);
    for (const b of [this.lockedBlock, this.validBlock]) if (b && !blocks.some((x) => x.hash === b.hash)) blocks.push(b);
    return blocks;
  }

  /** `block`: the block of a non-nil precommit (kept on disk with the lock it sets). */
  private vote(type: VoteType, votedHash: string, block?: Block): void {
    let hash = votedHash;
    const h = this.height;
    const r = this.round;
    this.step = type === PREVOTE ? 'prevote' : 'precommit';
    const step = type === PREVOTE ? STEP_PREVOTE : STEP_PRECOMMIT;
    if (!this.guard.allow(h, r, step, hash, block)) {
      // Signed before a restart at this very position: send that same vote again (never a second one).
      const last = this.guard.last;
      if (last.height !== h || last.round !== r || last.step !== step) return;
      hash = last.block_hash;
    }
    const vote = signVote(this.chain.params.chainId, this.key, { type, height: h, round: r, block_hash: hash });
    this.onVoteSigned?.(vote);
    this.broadcast({ kind: 'vote', vote });
    this.addVote(vote);
    this.process();
  }

  /** A vote signed before a restart, sent again unchanged (the sign guard recorded it; no new position). */
  private resend(type: VoteType, round: number, hash: string): void {
    const vote = signVote(this.chain.params.chainId, this.key, { type, height: this.height, round, block_hash: hash });
    this.broadcast({ kind: 'vote', vote });
    this.addVote(vote);
  }

  private onTimeoutPropose(h: number, r: number): void {
    if (h === this.height && r === this.round && this.step === 'propose') this.vote(PREVOTE, '');
  }

  private onTimeoutPrevote(h: number, r: number): void {
    if (h === this.height && r === this.round && this.step === 'prevote') this.vote(PRECOMMIT, '');
  }

  private onTimeoutPrecommit(h: number, r: number): void {
    if (h === this.height && r === this.round) {
      this.clearTimers();
      this.startRound(r + 1);
    }
  }

  /** Attach the precommits as the justification and commit the checked outcome (no second execution). */
  private async decide(block: Block, round: number): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    try {
      const precommits = this.votes.precommitsFor(round, block.hash);
      // Read before the commit: the head it moves starts the next height, which clears them.
      const seenAt = this.proposalSeenAt.get(block.hash);
      const final = await commitDecided(this.chain, block, round, precommits, this.checked.get(block.hash));
      if (!final) return; // imported meanwhile (sync)
      this.onFinalized?.({
        height: final.index,
        round,
        proposalToFinalityMs: seenAt === undefined ? null : Date.now() - seenAt,
      });
      this.onCommitted?.(final);
    } catch (err) {
      if (this.chain.height >= block.index) return;
      this.onError?.(err);
    } finally {
      this.deciding = false;
    }
  }
}
