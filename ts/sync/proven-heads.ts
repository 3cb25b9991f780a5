/**
 * Peers' heads, proven. A peer's status height or a block it announces is a hint: anyone can claim
 * head + 1,000,000 (issue 29, finding 6). A claim counts — for `catching_up`, `target_height`,
 * `eth_syncing`, the choice of a sync source, a proposer holding back — only once the peer served the
 * block at that height and the block proves itself to this node:
 *
 * - a block with a commit certificate: precommits for it, at its height, signed by validators holding
 *   more than 1/3 of the voting power of the set this node trusts (the one in force at its own head).
 *   Validators holding more than 1/3 cannot all be faulty without breaking BFT's assumption; it is the
 *   trust level of Tendermint's light client when it skips ahead;
 * - a block without one (PoA and DPoS before BFT, where a block is final when its proposer makes it):
 *   signed by a validator of that set.
 *
 * Blocks this node imported from a peer prove that peer's height too.
 */
import { type Block, type Chain, decodeBlock, totalPower, validatorSetAt } from '../chain/index.js';
import { certifiedPower, proposerSigned } from './certified-power.js';

/** How a probe block answers a claim. */
export type HeadProof =
  | { kind: 'proven' }
  /** Well-formed, but not signed by enough of the validators this node knows (no blame: a set this node has not caught up with). */
  | { kind: 'unproven'; reason: string }
  /** Not the block claimed (undecodable, another height, a forged certificate): the peer lied. */
  | { kind: 'false'; reason: string };

/** Whether `bytes`, served for a claimed head `claimed`, prove that height exists. */
export function proveHead(chain: Chain, bytes: Uint8Array, claimed: number): HeadProof {
  let b: Block;
  try {
    b = decodeBlock(bytes);
  } catch (err) {
    return { kind: 'false', reason: `undecodable block: ${(err as Error).message}` };
  }
  if (b.index !== claimed) return { kind: 'false', reason: `asked for block ${claimed}, got ${b.index}` };
  const trusted = validatorSetAt(chain.params, chain.state, chain.height + 1);
  if (b.justification.length === 0) {
    const by = proposerSigned(b, trusted);
    if (by === 'unknown proposer') return { kind: 'unproven', reason: 'no certificate, and not made by a known validator' };
    return by === 'signed'
      ? { kind: 'proven' }
      : { kind: 'false', reason: `the signature of its proposer ${b.validator} does not verify` };
  }
  const c = certifiedPower(chain.params.chainId, b.index, b.hash, [b.justification], trusted);
  if ('forged' in c) return { kind: 'false', reason: c.forged };
  const total = totalPower(trusted);
  return c.power * 3n > total
    ? { kind: 'proven' }
    : { kind: 'unproven', reason: `certificate signed by ${c.power} of ${total} known voting power (more than 1/3 needed)` };
}

/** Heights peers have proven, per peer. */
export class ProvenHeads {
  private readonly proven = new Map<string, number>();

  /** A peer proved it has `height` (a verified probe block, or blocks imported from it). */
  note(peer: string, height: number): void {
    if (height > (this.proven.get(peer) ?? -1)) this.proven.set(peer, height);
  }

  /** The height a peer has proven, or -1. */
  get(peer: string): number {
    return this.proven.get(peer) ?? -1;
  }

  drop(peer: string): void {
    this.proven.delete(peer);
  }

  /** Peers by proven height, highest first. */
  ranked(): [string, number][] {
    return [...this.proven].sort((a, b) => b[1] - a[1]);
  }

  /** The highest height any peer has proven, or -1. */
  best(): number {
    let max = -1;
    for (const h of this.proven.values()) max = Math.max(max, h);
    return max;
  }
}
