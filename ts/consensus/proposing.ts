import {
  type Block,
  type Chain,
  type CheckedBlock,
  type Vote,
  type VoteType,
  checkedOf,
  encodeJustification,
  proposalDigest,
  voteDigest,
} from '../chain/index.js';
import { type KeyPair, signDigest } from '../ledger/index.js';
import type { BlockTxPool } from '../mempool/interface.js';
import { toHex } from '../util/index.js';
import type { BftOptions, BlockBuilder } from './bft-options.js';
import type { Proposal } from './messages.js';

/**
 * The pieces of BftEngine (bft.ts) that build blocks and sign what a validator sends: its proposal block,
 * the proposal and vote signatures, the slot a round-0 proposal is due at, and the final block a precommit
 * quorum decided. The engine keeps the state and decides when.
 */

/**
 * Time until round 0's proposal is due: one block time after the slot the parent's proposal went out in
 * (proposals go out on slot boundaries, so a late height does not push every later one back), or the
 * next slot boundary when the parent's proposal was not seen here (synced, or after a restart).
 */
export function untilSlot(blockTimeMs: number, parentProposedAt: number | undefined, now: number): number {
  const bt = blockTimeMs;
  const due = parentProposedAt === undefined ? Math.ceil(now / bt) * bt : Math.floor(parentProposedAt / bt) * bt + bt;
  return Math.max(0, due - now);
}

/**
 * A new block on the head from the pool's transactions, executed and sealed as a proposal of round r,
 * with its checked outcome (the commit applies it without a second execution). Null when the engine
 * moved on while it executed (`current` says whether it still holds) or the head moved before the seal.
 */
export async function buildProposalBlock(
  chain: Chain,
  mempool: BlockTxPool,
  key: KeyPair,
  opts: BftOptions,
  r: number,
  current: () => boolean,
): Promise<{ block: Block; checked: CheckedBlock } | null> {
  const head = chain.head;
  const consensusData = {
    last_commit: head.consensus === 'DPoS+BFT' ? head.justification : new Uint8Array(0),
    evidence: opts.evidence?.forProposal() ?? [],
  };
  const exec = await chain.execute(mempool.take(opts.maxBlockTxs), key.address, chain.now(), opts.pack, consensusData);
  if (!current()) return null;
  let sealed: ReturnType<Chain['seal']>;
  try {
    sealed = chain.seal(exec, key, r, { proposal: true });
  } catch {
    return null; // the head moved meanwhile
  }
  chain.abandon(sealed);
  const block = sealed.block;
  return { block, checked: { parentHash: block.previous_hash, ...checkedOf(sealed) } };
}

/** The node's block builder: the chain executes the pool's transactions on its head (buildProposalBlock). */
export function chainBlockBuilder(chain: Chain, mempool: BlockTxPool, key: KeyPair, opts: BftOptions): BlockBuilder {
  return { build: (round, current) => buildProposalBlock(chain, mempool, key, opts, round, current) };
}

/** A proposal of a block, signed by this validator (the sign guard allowed the position first). */
export function signProposal(chainId: number, key: KeyPair, h: number, r: number, polRound: number, block: Block): Proposal {
  const signature = toHex(signDigest(proposalDigest(chainId, h, r, polRound, block.hash), key.privateKey));
  return { height: h, round: r, pol_round: polRound, block, signature };
}

/** A vote signed by this validator (the sign guard recorded its position first). */
export function signVote(
  chainId: number,
  key: KeyPair,
  body: { type: VoteType; height: number; round: number; block_hash: string },
): Vote {
  const signature = toHex(signDigest(voteDigest(chainId, body), key.privateKey));
  return { ...body, validator: key.address, signature };
}

/**
 * A proposal's transactions that this node's pool already admitted are the very same transactions
 * (same txid, i.e. the same signed fields, and the same signature and key): use the pool's objects,
 * whose signatures admission verified, so the proposal check does not verify them a second time.
 */
export function reusePoolTransactions(mempool: BlockTxPool, b: Block): void {
  const txs = b.transactions;
  for (let i = 0; i < txs.length; i++) {
    const known = mempool.get(txs[i].txid);
    if (known && known !== txs[i] && known.signature === txs[i].signature && known.public_key === txs[i].public_key)
      txs[i] = known;
  }
}

/**
 * Attach the precommits as the justification and commit the checked outcome (no second execution), or
 * import the block when it was checked on another parent. Null when the chain already holds the height
 * (imported meanwhile by sync).
 */
export async function commitDecided(
  chain: Chain,
  block: Block,
  round: number,
  precommits: { validator: string; signature: string }[],
  checked: CheckedBlock | undefined,
): Promise<Block | null> {
  const final: Block = { ...block, justification: encodeJustification({ round, precommits }) };
  if (chain.height + 1 !== final.index) return null;
  if (checked && checked.parentHash === chain.head.hash) await chain.commitChecked(final, checked);
  else await chain.importBlock(final);
  return final;
}
