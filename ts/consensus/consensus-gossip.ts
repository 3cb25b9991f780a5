/**
 * Gossip validation of the consensus topic (docs/p2p.md, "Gossip validation"), on every node, validator
 * or not: a message is relayed (ACCEPT) only after every check a receiver makes — strict decoding, the
 * canonical encoding (the bytes are what encoding the decoded message gives, so a re-encoded variant of a
 * real vote, which gossip would see as a new message, is refused), the signer named by the validator set
 * of its height, the signature. Only messages of the height being decided can be checked (a later
 * height's validator set depends on blocks not yet made): earlier ones are IGNOREd, later ones IGNOREd and
 * kept in a buffer bounded per peer, per height and in total, checked and handed to the engine when their
 * height comes. An IGNOREd message is neither relayed nor held against its sender (issue 29, finding 1: a
 * forged next-height vote relayed unchecked got the honest validator that relayed it banned).
 */
import { type Chain, validatorSetAt } from '../chain/index.js';
import {
  type ConsensusMessage,
  InvalidConsensusMessage,
  decodeConsensusMessage,
  encodeConsensusMessage,
  messageHeight,
} from './messages.js';
import { verifyConsensusMessage } from './verify-message.js';

/** ACCEPT (relay) or IGNORE (neither relay nor penalize); REJECT is an InvalidConsensusMessage thrown. */
export type GossipVerdict = 'accept' | 'ignore';

/** A vote is ~330 bytes of JSON; anything much longer is not one (refused before JSON.parse). */
export const MAX_VOTE_BYTES = 512;
/** Heights above the one being decided whose messages are kept for later (a peer a little ahead). */
export const FUTURE_HEIGHTS = 2;
/** Messages kept per peer and height: proposals and both votes of every validator for a few rounds. */
export const futurePerPeer = (validators: number): number => 32 + 4 * validators;
/** Messages kept per height, from all peers together. */
export const futurePerHeight = (validators: number): number => 256 + 16 * validators;
/** Messages kept in all. */
export const FUTURE_TOTAL = 4096;
/**
 * Rounds ahead of this validator's own that it takes messages for. A proposal carries up to 1 MiB of
 * block and every validator is the proposer of every n-th round: without a bound, one faulty validator
 * could sign proposals for ever later rounds until memory ran out. Votes (small) may run further ahead,
 * so a validator left behind in rounds still sees the later round's votes and jumps to it; a proposal it
 * IGNOREd it pulls with P/consensus-sync/1 once the height stalls.
 */
export const PROPOSAL_ROUNDS_AHEAD = 10;
export const VOTE_ROUNDS_AHEAD = 100;

interface Receiver {
  receive(m: ConsensusMessage, from: string): Promise<void>;
  /** The engine's position (its round bounds the rounds it takes messages for). */
  readonly state?: { round: number };
}

interface Held {
  m: ConsensusMessage;
  from: string;
}

const TYPE_VOTE = 2;

export class ConsensusGossip {
  /** height -> peer -> messages */
  private readonly future = new Map<number, Map<string, Held[]>>();
  private held = 0;

  /** `engine`: the BFT engine messages go to once checked (none on a full node, which only relays). */
  constructor(
    private readonly chain: Chain,
    private readonly engine: () => Receiver | null,
    private readonly log?: { debug: (o: object, m: string) => void },
  ) {
    // After the engine has moved to the new height (its listener runs in this same event).
    chain.on('block', () => setImmediate(() => void this.release()));
  }

  /** Messages kept for later heights (for tests and metrics). */
  get heldCount(): number {
    return this.held;
  }

  /**
   * Validate a gossiped message and hand it to the engine when it is valid. Throws
   * InvalidConsensusMessage (REJECT: the sender is penalized) for one that can never be valid.
   */
  async validate(bytes: Uint8Array, from: string): Promise<GossipVerdict> {
    if (bytes[0] === TYPE_VOTE && bytes.length > MAX_VOTE_BYTES)
      throw new InvalidConsensusMessage(`a vote of ${bytes.length} bytes`);
    const m = decodeConsensusMessage(bytes);
    if (!Buffer.from(encodeConsensusMessage(m)).equals(bytes))
      throw new InvalidConsensusMessage(`a non-canonical encoding of a ${m.kind}`);
    const h = messageHeight(m);
    const deciding = this.chain.height + 1;
    if (h < deciding) return 'ignore';
    if (h > deciding) {
      if (h <= deciding + FUTURE_HEIGHTS) this.hold(h, m, from);
      return 'ignore';
    }
    if (this.chain.consensusAt(h) !== 'DPoS+BFT' || this.tooFarAhead(m)) return 'ignore';
    verifyConsensusMessage(this.chain, m);
    await this.engine()?.receive(m, from);
    return 'accept';
  }

  private tooFarAhead(m: ConsensusMessage): boolean {
    const round = this.engine()?.state?.round;
    if (round === undefined) return false;
    const r = m.kind === 'vote' ? m.vote.round : m.kind === 'proposal' ? m.proposal.round : m.ref.round;
    return r > round + (m.kind === 'vote' ? VOTE_ROUNDS_AHEAD : PROPOSAL_ROUNDS_AHEAD);
  }

  private hold(height: number, m: ConsensusMessage, from: string): void {
    if (!this.engine()) return; // a full node has no use for them: it relays only what it can check now
    const validators = validatorSetAt(this.chain.params, this.chain.state, this.chain.height + 1).length;
    let byPeer = this.future.get(height);
    const atHeight = byPeer ? [...byPeer.values()].reduce((n, x) => n + x.length, 0) : 0;
    const mine = byPeer?.get(from)?.length ?? 0;
    if (this.held >= FUTURE_TOTAL || atHeight >= futurePerHeight(validators) || mine >= futurePerPeer(validators)) return;
    if (!byPeer) this.future.set(height, (byPeer = new Map()));
    let list = byPeer.get(from);
    if (!list) byPeer.set(from, (list = []));
    list.push({ m, from });
    this.held++;
  }

  /** The head moved: drop what is now old, check what is now the height being decided and pass it on. */
  private async release(): Promise<void> {
    const deciding = this.chain.height + 1;
    const due: Held[] = [];
    for (const [height, byPeer] of this.future) {
      if (height > deciding) continue;
      for (const list of byPeer.values()) {
        this.held -= list.length;
        if (height === deciding) due.push(...list);
      }
      this.future.delete(height);
    }
    for (const { m, from } of due) {
      if (this.chain.height + 1 !== deciding) return; // moved on again: the rest is old
      try {
        if (this.chain.consensusAt(deciding) !== 'DPoS+BFT') continue;
        verifyConsensusMessage(this.chain, m);
        await this.engine()?.receive(m, from);
      } catch (err) {
        // Not penalized: the message was IGNOREd when it came (docs/p2p.md).
        this.log?.debug({ peer: from, err: (err as Error).message }, 'a held consensus message did not verify');
      }
    }
  }
}
