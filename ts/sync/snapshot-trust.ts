/**
 * Whether a state sync snapshot's block is final (docs/p2p.md, "State sync", "Verifying the snapshot block"), in
 * two steps, CometBFT's light client adapted to headers that carry no validator-set hash:
 *
 * - before any chunk is fetched, the block must be signed by more than 1/3 of the voting power of a validator set
 *   this node trusts (the set its genesis puts in force; Tendermint's skipping verification at trust level 1/3):
 *   at least one honest validator then vouches for it. A block without a certificate (PoA, DPoS before BFT) must
 *   be signed by its proposer, a validator of that set;
 * - once the state is restored (its root is the block's), the validator set that state says was in force at the
 *   block must have certified it with the finality rule itself (3/4 of its power: the block rules' certificate
 *   check). The state root is what binds the set to the header here, where CometBFT's headers carry its hash.
 */
import {
  type ActiveValidator,
  type Block,
  type ChainParams,
  justificationProblem,
  phaseOfSet,
  totalPower,
  validatorSetAt,
} from '../chain/index.js';
import type { StateReader } from '../state/index.js';
import { certifiedPower, proposerSigned } from './certified-power.js';

/** How a snapshot block answers the light-client check. */
export type SnapshotBlockVerdict =
  | { kind: 'proven'; detail: string }
  /** Not signed by enough validators this node trusts: the set moved too far since (nobody's fault). */
  | { kind: 'unproven'; reason: string }
  /** Not a block any honest validator made: the peer that served it lied. */
  | { kind: 'forged'; reason: string };

/** The validator set this node trusts for a height (genesisTrustedSets). */
export type TrustedSets = (height: number) => readonly ActiveValidator[];

/**
 * The sets a node trusts from its genesis alone: the validators in force at height 1 for blocks before the DPoS+BFT
 * activation, and those the genesis state puts in force at the activation from it. Read at once: `genesisState`
 * may be closed after.
 */
export function genesisTrustedSets(params: ChainParams, genesisState: StateReader): TrustedSets {
  const activation = params.activation.dposBft;
  const before = validatorSetAt(params, genesisState, 1);
  const from = validatorSetAt(params, genesisState, Math.max(1, activation));
  return (height) => (height < activation ? before : from);
}

/**
 * The commit certificates of `block` a peer served: its justification, and the last_commit of `next` when that is
 * its child (block + 1 fixes that copy in its hash; every node holds the same one).
 */
export function snapshotCertificates(block: Block, next: Block | null): Uint8Array[] {
  const out: Uint8Array[] = [];
  if (block.justification.length > 0) out.push(block.justification);
  if (next !== null && next.index === block.index + 1 && next.previous_hash === block.hash && next.last_commit.length > 0)
    out.push(next.last_commit);
  return out;
}

/**
 * Before fetching a snapshot's chunks: whether its block (and `next`, the block after it if the peer had one) is
 * signed by more than 1/3 of the power of `trusted`, or, without a certificate, by a proposer of `trusted`.
 */
export function checkSnapshotBlock(
  params: ChainParams,
  trusted: readonly ActiveValidator[],
  block: Block,
  next: Block | null,
): SnapshotBlockVerdict {
  const h = block.index;
  const bftEra = h >= params.activation.dposBft;
  if (bftEra === (block.consensus === 'PoA'))
    return { kind: 'forged', reason: `block ${h} says ${block.consensus}, which its height cannot be on this chain` };
  if (block.consensus !== 'DPoS+BFT') {
    const by = proposerSigned(block, trusted);
    if (by === 'forged') return { kind: 'forged', reason: `the signature of its proposer ${block.validator} does not verify` };
    return by === 'signed'
      ? { kind: 'proven', detail: `a ${block.consensus} block signed by its proposer ${block.validator}, a trusted validator` }
      : { kind: 'unproven', reason: `its proposer ${block.validator} is not a validator this node trusts` };
  }
  const certificates = snapshotCertificates(block, next);
  if (certificates.length === 0) return { kind: 'forged', reason: `DPoS+BFT block ${h} served without its commit certificate` };
  const c = certifiedPower(params.chainId, h, block.hash, certificates, trusted);
  if ('forged' in c) return { kind: 'forged', reason: c.forged };
  const total = totalPower(trusted);
  const share = `validators holding ${c.power} of the ${total} voting power this node trusts`;
  return c.power * 3n > total
    ? { kind: 'proven', detail: `certified by ${share}` }
    : { kind: 'unproven', reason: `its certificate is signed by ${share} (more than 1/3 needed)` };
}

/**
 * After restoring a snapshot's state (which hashes to `block`'s state root): why that state's own validator set
 * in force at the block did not finalize it, or null when it did — the block's phase is the one the set gives,
 * and one of `certificates` is a commit certificate of the block under the block rules (distinct validators of
 * the set, every signature valid, at least 3/4 of its power); without BFT, the proposer is of the set and signed.
 * A problem means the state (so the block that names its root) is not the chain's: forged.
 */
export function finalityProblem(
  params: ChainParams,
  state: StateReader,
  block: Block,
  certificates: readonly Uint8Array[],
): string | null {
  const h = block.index;
  let set: readonly ActiveValidator[];
  try {
    set = validatorSetAt(params, state, h);
  } catch (err) {
    // A forged state may hold anything under the staking keys: a refusal, never a crash.
    return `the state's validator set at ${h} does not decode: ${(err as Error).message}`;
  }
  const phase = phaseOfSet(params, h, set);
  if (phase !== block.consensus)
    return `the restored state's validator set (${set.length}) makes block ${h} a ${phase} block; it says ${block.consensus}`;
  if (phase !== 'DPoS+BFT')
    return proposerSigned(block, set) === 'signed'
      ? null
      : `its proposer ${block.validator} is not a validator of the restored state's set at ${h}`;
  if (certificates.length === 0) return `block ${h} has no commit certificate`;
  const problems: string[] = [];
  for (const c of certificates) {
    const problem = justificationProblem(params.chainId, h, block.hash, c, set);
    if (problem === null) return null;
    problems.push(problem);
  }
  return `no certificate of block ${h} is a quorum of the validator set its restored state holds: ${problems.join('; ')}`;
}

/**
 * What the operator is told when a snapshot outran what the node's genesis can verify: the flag, for this snapshot's
 * height, with the hash taken from a source they rely on (not from the peers that offered it).
 */
export const trustHint = (height: number): string =>
  'the validator set has moved too far from the one this node trusts (its genesis) to verify the snapshot block: ' +
  `give --state-sync-trust ${height}:HASH with the hash of block ${height} from a node or explorer you rely on`;
