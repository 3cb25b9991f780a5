/**
 * Consensus views shared by JSON-RPC and REST: the BFT status (PoA and BFT forms of the spec), finality,
 * the signers of a block's commit certificate, and double-sign evidence. Every committed block is final
 * (PoA: when made; BFT: only blocks with a 3/4 precommit certificate are committed), so the finalized
 * height is the head's.
 */
import { BFT_HEADER_VERSION, decodeJustification, proposerAt, validatorSetAt } from '../chain/index.js';
import { NotFoundError } from '../util/index.js';
import type { ChainContext, NodeContext } from './context.js';

/** native_getBftStatus: the PoA form, plus the BFT fields while the chain runs DPoS+BFT. */
export async function bftStatus(ctx: NodeContext): Promise<Record<string, unknown>> {
  const { chain } = ctx;
  const finalized = ctx.consensus.finalizedHeight();
  const finalBlock = await chain.blocks.getBlock(finalized);
  const next = chain.height + 1;
  const phase = chain.consensusAt(next);
  const engine = ctx.network?.bft?.();
  const base = {
    consensus: phase,
    current_leader: engine?.proposer ?? proposerAt(chain.params, chain.state, next, 0)?.address ?? null,
    last_finalized_height: finalized,
    last_finalized_hash: finalBlock?.hash ?? null,
  };
  if (phase !== 'DPoS+BFT') return base;
  const live = engine && engine.height === next ? engine : null;
  const head = chain.head;
  return {
    ...base,
    current_round: live?.round ?? null,
    current_view: next,
    phase: live?.step ?? null,
    rounds_since_last_block: live?.round ?? null,
    locked_round: live ? live.locked_round : null,
    valid_round: live ? live.valid_round : null,
    ms_since_last_block: ctx.network ? Date.now() - ctx.network.lastFinalizedAt() : null,
    last_block_round: head.round,
    last_commit_round: head.justification.length ? decodeJustification(head.justification).round : null,
  };
}

/** native_getFinalizedHeight. */
export async function finalizedView(ctx: NodeContext): Promise<Record<string, unknown>> {
  const finalized = ctx.consensus.finalizedHeight();
  const b = await ctx.chain.blocks.getBlock(finalized);
  return {
    finalized_height: finalized,
    finalized_hash: b?.hash ?? null,
    latest_height: ctx.chain.height,
    blocks_behind_finality: ctx.chain.height - finalized,
  };
}

export interface BlockSigners {
  height: number;
  /** Round of the commit certificate; null for blocks without one (PoA, DPoS). */
  round: number | null;
  /** Validators whose precommits are in the certificate, in address order. */
  signers: string[];
  /** Validators of the height's set without a precommit in it. */
  missing: string[];
  /**
   * `last_commit`: the certificate the next block carries, fixed by that block's hash (the same on every
   * node); `justification`: this node's stored certificate of the head, which another node may hold with
   * other (equally valid) precommits until the next block settles it; `none` outside BFT.
   */
  source: 'last_commit' | 'justification' | 'none';
}

/**
 * Who signed a block: the precommits of its commit certificate (uptime, jailing and blocks_signed read
 * this). For every block but the head it comes from the next block's `last_commit`, so every node
 * answers the same.
 */
export async function blockSigners(ctx: ChainContext, height: number): Promise<BlockSigners> {
  const { chain } = ctx;
  const block = await chain.blocks.getBlock(height);
  if (!block) throw new NotFoundError('block not found');
  const child = height < chain.height ? await chain.blocks.getBlock(height + 1) : null;
  let bytes: Uint8Array = new Uint8Array(0);
  let source: BlockSigners['source'] = 'none';
  if (child && child.version >= BFT_HEADER_VERSION && child.last_commit.length > 0) {
    bytes = child.last_commit;
    source = 'last_commit';
  } else if (block.justification.length > 0) {
    bytes = block.justification;
    source = 'justification';
  }
  const set = validatorSetAt(chain.params, chain.state, height).map((v) => v.address);
  if (source === 'none') return { height, round: null, signers: [], missing: [], source };
  const j = decodeJustification(bytes);
  const signed = new Set(j.precommits.map((p) => p.validator));
  return {
    height,
    round: j.round,
    signers: set.filter((a) => signed.has(a)),
    missing: set.filter((a) => !signed.has(a)),
    source,
  };
}

/** GET /chain/evidence: pending double-sign evidence and evidence included by recent blocks. */
export function evidenceView(ctx: NodeContext): Record<string, unknown> {
  const e = ctx.network?.evidence() ?? { pending: [], committed: [] };
  return { pending: e.pending, committed: e.committed, total_pending: e.pending.length, total_committed: e.committed.length };
}
