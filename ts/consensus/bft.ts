import { RLP } from '@ethereumjs/rlp';
import { type Block, decodeBlock, encodeBlock } from '../chain/block.js';
import type { Chain } from '../chain/chain.js';
import {
  PRECOMMIT,
  PREVOTE,
  type Vote,
  type VoteType,
  encodeJustification,
  proposalDigest,
  quorum,
  verifyVote,
  voteDigest,
} from '../chain/justification.js';
import { proposerAt, validatorSetAt } from '../chain/schedule.js';
import { crypto } from '../crypto/index.js';
import { type KeyPair, signDigest } from '../ledger/keys.js';
import { isLowS } from '../ledger/rules.js';
import type { Mempool } from '../mempool/mempool.js';
import { bigToBytes, bytesToBig, fromHex, toHex } from '../util/hex.js';
import { STEP_PRECOMMIT, STEP_PREVOTE, STEP_PROPOSE, type SignGuard } from './privval.js';

export interface Proposal {
  height: number;
  round: number;
  /** Round in which this block gathered a prevote quorum (-1: a fresh block). */
  pol_round: number;
  block: Block;
  signature: string;
}

export type ConsensusMessage = { kind: 'proposal'; proposal: Proposal } | { kind: 'vote'; vote: Vote };

/** A consensus message that cannot be valid (wrong signer, bad signature, malformed): the sender misbehaved. */
export class InvalidConsensusMessage extends Error {}

/** Wire encoding: 0x01 || RLP(proposal) or 0x02 || JSON(vote). */
export function encodeConsensusMessage(m: ConsensusMessage): Uint8Array {
  if (m.kind === 'vote') return Buffer.concat([Buffer.from([2]), Buffer.from(JSON.stringify(m.vote))]);
  const p = m.proposal;
  const body = RLP.encode([
    bigToBytes(BigInt(p.height)),
    bigToBytes(BigInt(p.round)),
    bigToBytes(BigInt(p.pol_round + 1)),
    encodeBlock(p.block),
    fromHex(p.signature),
  ]);
  return Buffer.concat([Buffer.from([1]), body]);
}

export function decodeConsensusMessage(bytes: Uint8Array): ConsensusMessage {
  try {
    if (bytes[0] === 2) {
      const v = JSON.parse(Buffer.from(bytes.subarray(1)).toString('utf8')) as Vote;
      if (![PREVOTE, PRECOMMIT].includes(v.type) || !Number.isSafeInteger(v.height) || !Number.isSafeInteger(v.round)) {
        throw new Error('bad vote fields');
      }
      if (typeof v.block_hash !== 'string' || typeof v.validator !== 'string' || typeof v.signature !== 'string') {
        throw new Error('bad vote fields');
      }
      return { kind: 'vote', vote: v };
    }
    if (bytes[0] === 1) {
      const f = RLP.decode(bytes.subarray(1)) as Uint8Array[];
      return {
        kind: 'proposal',
        proposal: {
          height: Number(bytesToBig(f[0])),
          round: Number(bytesToBig(f[1])),
          pol_round: Number(bytesToBig(f[2])) - 1,
          block: decodeBlock(f[3]),
          signature: toHex(f[4]),
        },
      };
    }
  } catch (err) {
    throw new InvalidConsensusMessage(`malformed consensus message: ${(err as Error).message}`);
  }
  throw new InvalidConsensusMessage('unknown consensus message type');
}

/** Round timeouts (CometBFT's defaults: propose 3 s, prevote/precommit 1 s, +0.5 s per round). */
export const TIMEOUT_PROPOSE_MS = 3000;
export const TIMEOUT_VOTE_MS = 1000;
export const TIMEOUT_DELTA_MS = 500;

export interface BftOptions {
  blockTimeMs: number;
  maxBlockTxs: number;
}

type Step = 'propose' | 'prevote' | 'precommit';

/**
 * Tendermint consensus (arXiv 1807.04938, Algorithm 1) for the DPoS+BFT phase: rounds of propose,
 * prevote and precommit with locking and valid-round rules, the proposer (height + round) mod n over the
 * validators sorted by address, timeouts growing per round, and a block final when precommits of at
 * least 3/4 of the stake (equal stakes until the staking module) agree on it in one round. Those
 * precommits become the block's justification. Every proposal is checked with the same block-validity
 * rule as any block (validateAndApply in proposal mode) before this validator prevotes for it, and a
 * SignGuard persists each signature's position first so nothing conflicting is ever signed.
 */
export class BftEngine {
  readonly name = 'DPoS+BFT';
  private height = 0;
  private round = 0;
  private step: Step = 'propose';
  private lockedRound = -1;
  private lockedHash: string | null = null;
  private validRound = -1;
  private validBlock: Block | null = null;
  private proposals = new Map<number, Proposal>();
  private votes = new Map<string, Map<string, Vote>>();
  private validity = new Map<string, Promise<boolean>>();
  private valid = new Map<string, boolean>();
  private done = new Set<string>();
  private timers: NodeJS.Timeout[] = [];
  private future: ConsensusMessage[] = [];
  private stopped = true;
  private deciding = false;
  private heightStartedAt = 0;
  /** What this validator signed at the current height, re-gossiped while the height is stuck. */
  private sent: ConsensusMessage[] = [];
  private regossip: NodeJS.Timeout | null = null;
  onError?: (err: unknown) => void;
  /** Committed a block this engine decided (the node gossips it and updates the pool). */
  onCommitted?: (block: Block) => void;
  /** Conflicting votes of one validator for one (height, round, step): double-sign evidence. */
  onEvidence?: (a: Vote, b: Vote) => void;

  constructor(
    private readonly chain: Chain,
    private readonly mempool: Mempool,
    private readonly key: KeyPair,
    private readonly opts: BftOptions,
    private readonly guard: SignGuard,
    private readonly broadcast: (m: ConsensusMessage) => void,
  ) {}

  get state(): { height: number; round: number; step: Step; locked_round: number; valid_round: number } {
    return {
      height: this.height,
      round: this.round,
      step: this.step,
      locked_round: this.lockedRound,
      valid_round: this.validRound,
    };
  }

  start(): void {
    this.stopped = false;
    this.chain.on('block', this.onHead);
    this.onHead();
    // Gossip delivers each message once; a validator that restarted or was cut off missed them. Like
    // CometBFT's vote gossip, re-send what this validator signed at a height that is not moving.
    this.regossip = setInterval(
      () => {
        if (Date.now() - this.heightStartedAt > this.opts.blockTimeMs * 2) for (const m of this.sent) this.broadcast(m);
      },
      Math.max(500, this.opts.blockTimeMs),
    );
    this.regossip.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.regossip) clearInterval(this.regossip);
    this.chain.off('block', this.onHead);
    this.clearTimers();
  }

  /** Whether this node takes part at the next height (a validator there, and the height runs BFT). */
  private active(height: number): boolean {
    return (
      this.chain.consensusAt(height) === 'DPoS+BFT' &&
      validatorSetAt(this.chain.params, this.chain.state, height).some((v) => v.address === this.key.address)
    );
  }

  private readonly onHead = (): void => {
    if (this.stopped) return;
    const h = this.chain.height + 1;
    if (h <= this.height && this.height !== 0) return;
    this.clearTimers();
    this.height = h;
    this.lockedRound = -1;
    this.lockedHash = null;
    this.validRound = -1;
    this.validBlock = null;
    this.proposals.clear();
    this.votes.clear();
    this.validity.clear();
    this.valid.clear();
    this.done.clear();
    this.sent = [];
    this.heightStartedAt = Date.now();
    if (!this.active(h)) return;
    // After a restart mid-height, resume where the signature state says this validator was: keep its
    // lock, rejoin its round, and send its last vote again (the identical vote; never a second one).
    const last = this.guard.last;
    if (last.height === h) {
      if (last.lock) {
        this.lockedRound = last.lock.round;
        this.lockedHash = last.lock.block_hash;
      }
      this.startRound(last.round);
      if (last.step === STEP_PREVOTE) this.vote(PREVOTE, last.block_hash);
      else if (last.step === STEP_PRECOMMIT) {
        this.step = 'prevote';
        this.vote(PRECOMMIT, last.block_hash);
      }
    } else this.startRound(0);
    const pending = this.future.filter((m) => (m.kind === 'vote' ? m.vote.height : m.proposal.height) === h);
    this.future = [];
    for (const m of pending) void this.receive(m).catch(() => undefined);
  };

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

  private startRound(r: number): void {
    this.round = r;
    this.step = 'propose';
    const h = this.height;
    const proposer = proposerAt(this.chain.params, this.chain.state, h, r);
    if (proposer?.address === this.key.address) {
      // Round 0 waits out the block time since the height began, so blocks come once per slot.
      const wait = r === 0 ? Math.max(0, this.opts.blockTimeMs - (Date.now() - this.heightStartedAt)) : 0;
      this.schedule(wait, () => void this.propose(h, r).catch((err) => this.onError?.(err)));
    }
    this.schedule(this.opts.blockTimeMs + TIMEOUT_PROPOSE_MS + TIMEOUT_DELTA_MS * r, () => this.onTimeoutPropose(h, r));
    this.process();
  }

  private async propose(h: number, r: number): Promise<void> {
    if (h !== this.height || r !== this.round || this.step !== 'propose') return;
    let block = this.validBlock;
    if (!block) {
      const exec = await this.chain.execute(this.mempool.take(this.opts.maxBlockTxs), this.key.address, this.chain.now());
      if (h !== this.height || r !== this.round) return;
      let sealed: ReturnType<Chain['seal']>;
      try {
        sealed = this.chain.seal(exec, this.key, r, { proposal: true });
      } catch {
        return; // the head moved meanwhile
      }
      this.chain.abandon(sealed);
      block = sealed.block;
      this.valid.set(block.hash, true);
    }
    if (!this.guard.allow(h, r, STEP_PROPOSE, block.hash)) return;
    const signature = toHex(
      signDigest(proposalDigest(this.chain.params.chainId, h, r, this.validRound, block.hash), this.key.privateKey),
    );
    const proposal: Proposal = { height: h, round: r, pol_round: this.validRound, block, signature };
    this.sent.push({ kind: 'proposal', proposal });
    this.broadcast({ kind: 'proposal', proposal });
    await this.receive({ kind: 'proposal', proposal });
  }

  /** A proposal or vote from a peer (or this node). Throws InvalidConsensusMessage for forged ones. */
  async receive(m: ConsensusMessage): Promise<void> {
    if (this.stopped) return;
    const h = m.kind === 'vote' ? m.vote.height : m.proposal.height;
    if (h === this.height + 1 && this.future.length < 1000) {
      this.future.push(m);
      return;
    }
    if (h !== this.height || !this.active(h)) return;
    if (m.kind === 'vote') this.addVote(m.vote);
    else await this.addProposal(m.proposal);
    this.process();
  }

  private addVote(v: Vote): void {
    const validators = validatorSetAt(this.chain.params, this.chain.state, v.height);
    const validator = validators.find((x) => x.address === v.validator);
    if (!verifyVote(this.chain.params.chainId, v, validator))
      throw new InvalidConsensusMessage(`vote of ${v.validator} does not verify`);
    const key = `${v.round}/${v.type}`;
    let byValidator = this.votes.get(key);
    if (!byValidator) this.votes.set(key, (byValidator = new Map()));
    const prior = byValidator.get(v.validator);
    if (prior && prior.block_hash !== v.block_hash) {
      this.onEvidence?.(prior, v);
      return;
    }
    byValidator.set(v.validator, v);
    // Round skip: more than 1/4 of the validators are already in a later round.
    if (v.round > this.round) {
      const inRound = new Set<string>();
      for (const [k, votes] of this.votes) if (Number(k.split('/')[0]) === v.round) for (const a of votes.keys()) inRound.add(a);
      if (inRound.size * 4 > validators.length) {
        this.clearTimers();
        this.startRound(v.round);
      }
    }
  }

  private async addProposal(p: Proposal): Promise<void> {
    const proposer = proposerAt(this.chain.params, this.chain.state, p.height, p.round);
    const sig = /^[0-9a-f]{128}$/.test(p.signature) ? fromHex(p.signature) : null;
    const digest = proposalDigest(this.chain.params.chainId, p.height, p.round, p.pol_round, p.block.hash);
    if (!proposer || !sig || !isLowS(sig) || !crypto().verify(sig, digest, fromHex(proposer.public_key))) {
      throw new InvalidConsensusMessage(`proposal for ${p.height}/${p.round} is not signed by its proposer`);
    }
    if (this.proposals.has(p.round)) return;
    this.proposals.set(p.round, p);
    await this.checkValid(p.block);
  }

  /** The block-validity rule on a proposal (executed on an overlay, then dropped), once per block hash. */
  private checkValid(b: Block): Promise<boolean> {
    let v = this.validity.get(b.hash);
    if (!v) {
      v = this.chain
        .checkProposal(b)
        .then(() => true)
        .catch(() => false)
        .then((ok) => {
          this.valid.set(b.hash, ok);
          this.process();
          return ok;
        });
      this.validity.set(b.hash, v);
    }
    return v;
  }

  private count(round: number, type: VoteType, hash?: string): number {
    const votes = this.votes.get(`${round}/${type}`);
    if (!votes) return 0;
    if (hash === undefined) return votes.size;
    let n = 0;
    for (const v of votes.values()) if (v.block_hash === hash) n++;
    return n;
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
    const q = quorum(validatorSetAt(this.chain.params, this.chain.state, h).length);
    // Decide: a proposal of any round with a precommit quorum for it.
    for (const [pr, p] of this.proposals) {
      void pr;
      for (const [k] of this.votes) {
        const [round, type] = k.split('/').map(Number);
        if (type === PRECOMMIT && this.count(round, PRECOMMIT, p.block.hash) >= q && this.valid.get(p.block.hash)) {
          void this.decide(p.block, round);
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
      } else if (p.pol_round < r && this.count(p.pol_round, PREVOTE, p.block.hash) >= q) {
        const ok = pv && (this.lockedRound <= p.pol_round || this.lockedHash === p.block.hash);
        this.vote(PREVOTE, ok ? p.block.hash : '');
      }
    }
    if (this.step === 'prevote' && this.count(r, PREVOTE) >= q && this.once(`pvto/${r}`)) {
      this.schedule(TIMEOUT_VOTE_MS + TIMEOUT_DELTA_MS * r, () => this.onTimeoutPrevote(h, r));
    }
    if (p && pv && this.step !== 'propose' && this.count(r, PREVOTE, p.block.hash) >= q && this.once(`lock/${r}`)) {
      if (this.step === 'prevote') {
        this.lockedHash = p.block.hash;
        this.lockedRound = r;
        this.vote(PRECOMMIT, p.block.hash);
      }
      this.validBlock = p.block;
      this.validRound = r;
    }
    if (this.step === 'prevote' && this.count(r, PREVOTE, '') >= q) this.vote(PRECOMMIT, '');
    if (this.count(r, PRECOMMIT) >= q && this.once(`pcto/${r}`)) {
      this.schedule(TIMEOUT_VOTE_MS + TIMEOUT_DELTA_MS * r, () => this.onTimeoutPrecommit(h, r));
    }
  }

  private vote(type: VoteType, votedHash: string): void {
    let hash = votedHash;
    const h = this.height;
    const r = this.round;
    this.step = type === PREVOTE ? 'prevote' : 'precommit';
    const step = type === PREVOTE ? STEP_PREVOTE : STEP_PRECOMMIT;
    if (!this.guard.allow(h, r, step, hash)) {
      // Signed before a restart at this very position: send that same vote again (never a second one).
      const last = this.guard.last;
      if (last.height !== h || last.round !== r || last.step !== step) return;
      hash = last.block_hash;
    }
    const body = { type, height: h, round: r, block_hash: hash };
    const signature = toHex(signDigest(voteDigest(this.chain.params.chainId, body), this.key.privateKey));
    const vote: Vote = { ...body, validator: this.key.address, signature };
    this.sent.push({ kind: 'vote', vote });
    this.broadcast({ kind: 'vote', vote });
    this.addVote(vote);
    this.process();
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

  /** Attach the precommits as the justification and commit through the block-validity rule. */
  private async decide(block: Block, round: number): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    try {
      const precommits = [...(this.votes.get(`${round}/${PRECOMMIT}`)?.values() ?? [])]
        .filter((v) => v.block_hash === block.hash)
        .sort((a, b) => (a.validator < b.validator ? -1 : 1))
        .map((v) => ({ validator: v.validator, signature: v.signature }));
      const final: Block = { ...block, justification: encodeJustification({ round, precommits }) };
      if (this.chain.height + 1 !== final.index) return; // imported meanwhile (sync)
      await this.chain.importBlock(final);
      this.onCommitted?.(final);
    } catch (err) {
      if (this.chain.height >= block.index) return;
      this.onError?.(err);
    } finally {
      this.deciding = false;
    }
  }
}
