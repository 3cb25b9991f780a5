/**
 * Step-by-step driving of the BFT core (ts/consensus/bft-core.ts) without a network, timers or a chain:
 * four validators with real keys, blocks with real hashes and proposer signatures, proposals and votes
 * signed as the engine signs them. The test plays the driver: it feeds inputs and reads the effects.
 */
import { type ActiveValidator, type Block, blockHash, headerOf, type Vote, type VoteType } from '../../ts/chain/index.js';
import { type CoreEffect, type CoreInput, type CoreState, initialState, step } from '../../ts/consensus/bft-core.js';
import { roundTimeouts } from '../../ts/consensus/bft-options.js';
import { guardedVote } from '../../ts/consensus/bft.js';
import type { Proposal } from '../../ts/consensus/messages.js';
import type { SignGuard } from '../../ts/consensus/privval.js';
import { signProposal, signVote } from '../../ts/consensus/proposing.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic, signDigest } from '../../ts/ledger/index.js';
import { fromHex, toHex } from '../../ts/util/index.js';

export const CHAIN_ID = 7120;
export const BLOCK_TIME_MS = 1000;
export const TIMEOUTS = roundTimeouts(BLOCK_TIME_MS);
/** The height the tests decide: its proposer of round r is sorted[(HEIGHT + r) % 4]. */
export const HEIGHT = 5;

/** Four validator keys in proposer order (sorted by address). */
export const KEYS: KeyPair[] = [30, 31, 32, 33]
  .map((i) => keyPairFromMnemonic(DEV_MNEMONIC, i))
  .sort((a, b) => (a.address < b.address ? -1 : 1));

/** The validator set with these voting powers (default: 1 each). */
export const validatorSet = (powers: bigint[] = [1n, 1n, 1n, 1n]): ActiveValidator[] =>
  KEYS.map((k, i) => ({ address: k.address, public_key: toHex(k.publicKey), name: `v${i}`, power: powers[i] }));

/** The key proposing (HEIGHT, round). */
export const proposerKey = (round: number, height = HEIGHT): KeyPair => KEYS[(height + round) % KEYS.length];

/** A block of `height` with a real hash and its proposer's signature; `tag` tells blocks of one height apart. */
export function testBlock(tag: number, height = HEIGHT, round = 0): Block {
  const proposer = proposerKey(round, height);
  const b: Block = {
    version: 2,
    index: height,
    hash: '',
    previous_hash: 'ab'.repeat(32),
    timestamp: 1_700_000_000 + height,
    tx_count: 0,
    validator: proposer.address,
    merkle_root: '00'.repeat(32),
    state_root: tag.toString(16).padStart(64, '0'),
    receipts_root: '00'.repeat(32),
    round,
    gas_used: 0n,
    logs_bloom: '00'.repeat(256),
    consensus: 'DPoS+BFT',
    signature: '',
    justification: new Uint8Array(0),
    transactions: [],
    last_commit_hash: '00'.repeat(32),
    evidence_hash: '00'.repeat(32),
    last_commit: new Uint8Array(0),
    evidence: [],
  };
  b.hash = blockHash(headerOf(b));
  b.signature = toHex(signDigest(fromHex(b.hash), proposer.privateKey));
  return b;
}

/** The proposal of (height, round) signed by its proposer. */
export const proposalOf = (block: Block, round: number, polRound = -1, height = HEIGHT): Proposal =>
  signProposal(CHAIN_ID, proposerKey(round, height), height, round, polRound, block);

export const voteOf = (key: KeyPair, type: VoteType, round: number, hash: string, height = HEIGHT): Vote =>
  signVote(CHAIN_ID, key, { type, height, round, block_hash: hash });

/** One validator's core, stepped by hand. */
export class CoreHarness {
  state: CoreState;
  /** Every effect so far, in order. */
  readonly log: CoreEffect[] = [];

  constructor(
    readonly me: KeyPair,
    readonly validators: ActiveValidator[] = validatorSet(),
  ) {
    this.state = initialState({ chainId: CHAIN_ID, me: me.address, timeouts: TIMEOUTS });
  }

  /** Apply one input; the effects it asked for. */
  feed(input: CoreInput): CoreEffect[] {
    const { state, effects } = step(this.state, input);
    this.state = state;
    this.log.push(...effects);
    return effects;
  }

  start(opts: { slotWaitMs?: number; resume?: Extract<CoreInput, { kind: 'start_height' }>['resume'] } = {}): CoreEffect[] {
    return this.feed({
      kind: 'start_height',
      height: HEIGHT,
      validators: this.validators,
      active: true,
      slotWaitMs: opts.slotWaitMs ?? 0,
      resume: opts.resume,
    });
  }

  /** A proposal arrives and its block checks out (valid or not). */
  proposal(p: Proposal, valid = true): CoreEffect[] {
    const effects = this.feed({ kind: 'proposal', proposal: p });
    if (effects.some((e) => e.kind === 'check_block'))
      effects.push(...this.feed({ kind: 'block_checked', height: p.height, hash: p.block.hash, valid }));
    return effects;
  }

  vote(v: Vote): CoreEffect[] {
    return this.feed({ kind: 'vote', vote: v });
  }

  /** Votes of these validators (indexes into KEYS). */
  votes(who: number[], type: VoteType, round: number, hash: string): CoreEffect[] {
    return who.flatMap((i) => this.vote(voteOf(KEYS[i], type, round, hash)));
  }

  /**
   * Play the driver for the effects that sign or keep something: sign each requested vote as the engine does
   * (through `guard` when given, else as if the guard allowed it), send votes signed before a restart
   * again, keep valid blocks with the guard, and feed the signed votes back. Returns the votes signed and
   * the effects their feedback produced.
   */
  sign(effects: CoreEffect[], guard?: SignGuard): { signed: Vote[]; effects: CoreEffect[] } {
    const signed: Vote[] = [];
    const more: CoreEffect[] = [];
    for (const e of effects) {
      let body: Parameters<typeof signVote>[2] | null = null;
      if (e.kind === 'sign_vote')
        body = guard ? guardedVote(guard, e) : { type: e.type, height: e.height, round: e.round, block_hash: e.blockHash };
      else if (e.kind === 'resend_vote') body = { type: e.type, height: e.height, round: e.round, block_hash: e.blockHash };
      else if (e.kind === 'keep_valid') guard?.keepValid(e.height, e.round, e.block);
      if (!body) continue;
      const v = signVote(CHAIN_ID, this.me, body);
      signed.push(v);
      const next = this.vote(v);
      more.push(...next);
      const deeper = this.sign(next, guard);
      signed.push(...deeper.signed);
      more.push(...deeper.effects);
    }
    return { signed, effects: more };
  }
}

/** The effects of one kind. */
export const ofKind = <K extends CoreEffect['kind']>(effects: CoreEffect[], kind: K): Extract<CoreEffect, { kind: K }>[] =>
  effects.filter((e): e is Extract<CoreEffect, { kind: K }> => e.kind === kind);

/** The sign_vote effects as [type, round, hash] triples. */
export const voteRequests = (effects: CoreEffect[]): [number, number, string][] =>
  ofKind(effects, 'sign_vote').map((e) => [e.type, e.round, e.blockHash]);
