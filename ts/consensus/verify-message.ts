/**
 * The checks a consensus message must pass before anything uses or relays it: the signer is the one the
 * height's validator set names (the proposer of (height, round), a member for a vote) and the signature
 * verifies. Shared by the BFT engine and by gossip validation on every node, validator or not.
 */
import { type ActiveValidator, type Chain, type Vote, proposalDigest, verifyVote, validatorSetAt } from '../chain/index.js';
import { crypto } from '../crypto/index.js';
import { isLowS } from '../ledger/index.js';
import { fromHex } from '../util/index.js';
import { type ConsensusMessage, InvalidConsensusMessage, type Proposal } from './messages.js';

/** Throws InvalidConsensusMessage unless the proposer of (height, round) signed this proposal of blockHash. */
export function verifyProposalSignature(chain: Chain, p: Omit<Proposal, 'block'>, blockHash: string): void {
  verifyProposalBySet(chain.params.chainId, validatorSetAt(chain.params, chain.state, p.height), p, blockHash);
}

/**
 * verifyProposalSignature for a caller that holds the height's validator set (the BFT core): the proposer of
 * (height, round) is set[(height + round) mod n] (chain/schedule.ts proposerAt).
 */
export function verifyProposalBySet(
  chainId: number,
  set: readonly ActiveValidator[],
  p: Omit<Proposal, 'block'>,
  blockHash: string,
): void {
  const proposer = set.length ? set[(p.height + p.round) % set.length] : null;
  const sig = /^[0-9a-f]{128}$/.test(p.signature) ? fromHex(p.signature) : null;
  const digest = proposalDigest(chainId, p.height, p.round, p.pol_round, blockHash);
  if (!proposer || !sig || !isLowS(sig) || !crypto().verify(sig, digest, fromHex(proposer.public_key))) {
    throw new InvalidConsensusMessage(`proposal for ${p.height}/${p.round} is not signed by its proposer`);
  }
  if (p.pol_round < -1 || p.pol_round >= p.round) throw new InvalidConsensusMessage('pol_round out of range');
}

/** Throws InvalidConsensusMessage unless a validator of the vote's height signed it. */
export function verifyVoteSignature(chain: Chain, v: Vote): void {
  const validator = validatorSetAt(chain.params, chain.state, v.height).find((x) => x.address === v.validator);
  if (!validator) throw new InvalidConsensusMessage(`${v.validator} is not a validator at height ${v.height}`);
  if (!verifyVote(chain.params.chainId, v, validator))
    throw new InvalidConsensusMessage(`vote of ${v.validator} does not verify`);
}

/**
 * Every check of a message of the height being decided (the chain's head + 1), whose validator set the
 * head's state fixes. Messages of later heights cannot be checked yet (their set depends on blocks to come).
 */
export function verifyConsensusMessage(chain: Chain, m: ConsensusMessage): void {
  if (m.kind === 'vote') verifyVoteSignature(chain, m.vote);
  else if (m.kind === 'proposal') verifyProposalSignature(chain, m.proposal, m.proposal.block.hash);
  else verifyProposalSignature(chain, m.ref, m.ref.block_hash);
}
