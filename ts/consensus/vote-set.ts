import {
  type DoubleSignEvidence,
  doubleSignEvidence,
  PRECOMMIT,
  type Vote,
  type VoteType,
  isMoreThanFaulty,
  isQuorum,
  verifyVote,
  type ActiveValidator,
  totalPower,
} from '../chain/index.js';
import { InvalidConsensusMessage } from './messages.js';

/**
 * The votes of one height (CometBFT's HeightVoteSet): by round and step, one per validator, weighed
 * by the voting power of the height's validator set. A second, different vote of a validator at a
 * position is not counted; it is double-sign evidence.
 */
export class HeightVotes {
  private readonly votes = new Map<string, Map<string, Vote>>();
  private readonly total: bigint;
  private readonly byAddress: Map<string, ActiveValidator>;

  constructor(
    private readonly chainId: number,
    validators: readonly ActiveValidator[],
  ) {
    this.total = totalPower(validators);
    this.byAddress = new Map(validators.map((v) => [v.address, v]));
  }

  has(address: string): boolean {
    return this.byAddress.has(address);
  }

  /**
   * Add a verified vote: 'added', 'known' (the same vote again), or the evidence of a conflicting one.
   * Throws InvalidConsensusMessage for a vote that is not a validator's or does not verify.
   */
  add(v: Vote): 'added' | 'known' | DoubleSignEvidence {
    if (!verifyVote(this.chainId, v, this.byAddress.get(v.validator)))
      throw new InvalidConsensusMessage(`vote of ${v.validator} does not verify`);
    const key = `${v.round}/${v.type}`;
    let at = this.votes.get(key);
    if (!at) this.votes.set(key, (at = new Map()));
    const prior = at.get(v.validator);
    if (prior) return prior.block_hash === v.block_hash ? 'known' : doubleSignEvidence(prior, v);
    at.set(v.validator, v);
    return 'added';
  }

  /** Voting power of the votes of (round, type), for one block hash when given. */
  power(round: number, type: VoteType, hash?: string): bigint {
    const at = this.votes.get(`${round}/${type}`);
    if (!at) return 0n;
    let sum = 0n;
    for (const v of at.values())
      if (hash === undefined || v.block_hash === hash) sum += this.byAddress.get(v.validator)?.power ?? 0n;
    return sum;
  }

  /** At least 3/4 of the voting power. */
  quorum(round: number, type: VoteType, hash?: string): boolean {
    return isQuorum(this.power(round, type, hash), this.total);
  }

  /** More than 1/4 of the voting power has voted (either step) in this round. */
  roundHasMoreThanFaulty(round: number): boolean {
    const seen = new Set<string>();
    for (const [k, at] of this.votes) if (Number(k.split('/')[0]) === round) for (const a of at.keys()) seen.add(a);
    let power = 0n;
    for (const a of seen) power += this.byAddress.get(a)?.power ?? 0n;
    return isMoreThanFaulty(power, this.total);
  }

  /** Every vote of the height. */
  all(): Vote[] {
    return [...this.votes.values()].flatMap((at) => [...at.values()]);
  }

  /** Rounds in which some precommit arrived. */
  precommitRounds(): number[] {
    const rounds: number[] = [];
    for (const k of this.votes.keys()) {
      const [round, type] = k.split('/').map(Number);
      if (type === PRECOMMIT) rounds.push(round);
    }
    return rounds;
  }

  /** The precommits of a round for a block, in address order (a commit certificate's entries). */
  precommitsFor(round: number, hash: string): { validator: string; signature: string }[] {
    return [...(this.votes.get(`${round}/${PRECOMMIT}`)?.values() ?? [])]
      .filter((v) => v.block_hash === hash)
      .sort((a, b) => (a.validator < b.validator ? -1 : 1))
      .map((v) => ({ validator: v.validator, signature: v.signature }));
  }
}
