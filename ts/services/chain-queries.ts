import { type ActiveValidator, type Block, blockSummary, decodeEvidence, evidenceId, validatorSetAt } from '../chain/index.js';
import type { ReceiptRecord } from '../execution/index.js';
import { BeforeEarliestBlockError, NotFoundError } from '../util/index.js';
import { type BlockRef, blockAtHeight, resolveBlock } from './block-resolver.js';
import { type ChainContext, NATIVE_TOKEN, type NodeContext } from './context.js';

export const MAX_BLOCKS_PAGE = 100;
export const DEFAULT_BLOCKS_PAGE = 20;

/** GET /net/peers: connected peers that passed the chain handshake. */
export function netPeers(ctx: NodeContext): Record<string, unknown> {
  const peers = ctx.network?.peers() ?? [];
  return { peer_id: ctx.network?.peerId ?? null, peers, total: peers.length };
}

export function health(ctx: NodeContext): { status: 'ok'; node: string } {
  return { status: 'ok', node: ctx.nodeName };
}

export function nativeStatus(ctx: NodeContext): Record<string, unknown> {
  const head = ctx.chain.head;
  const net = ctx.network;
  const bft = net?.bft?.();
  const next = ctx.chain.height + 1;
  // One source with eth_syncing: the catch-up toward a proven peer head (ts/sync/proven-heads.ts).
  const syncing = net?.syncing() ?? null;
  return {
    version: { version: ctx.version, build: ctx.build },
    chain_id: ctx.chain.params.chainId,
    consensus: head.consensus,
    native_token: NATIVE_TOKEN,
    sync_info: {
      latest_block_height: head.index,
      latest_block_hash: head.hash,
      latest_block_time: head.timestamp,
      earliest_block_height: ctx.chain.blocks.earliest,
      syncing: syncing !== null,
      catching_up: syncing !== null,
      target_height: syncing?.highest ?? net?.targetHeight() ?? head.index,
      peers: net?.peers().length ?? 0,
      finalized_height: ctx.consensus.finalizedHeight(),
      blocks_imported: net?.blocksImported() ?? 0,
    },
    consensus_state: {
      phase: ctx.chain.consensusAt(next),
      height: next,
      round: bft && bft.height === next ? bft.round : null,
      step: bft && bft.height === next ? bft.step : null,
      proposer: bft && bft.height === next ? bft.proposer : null,
      validator: bft !== undefined,
    },
    validators: { active_count: ctx.chain.params.validators.length },
    uptime_seconds: Math.floor((Date.now() - ctx.startedAt) / 1000),
    crypto_backend: ctx.cryptoBackend,
  };
}

/** Newest-first page of blocks; page is 0-based. */
export async function listBlocks(ctx: NodeContext, page: number, limit: number): Promise<Record<string, unknown>> {
  const top = ctx.chain.height - page * limit;
  const blocks: Record<string, unknown>[] = [];
  for (let h = top; h > top - limit && h >= 0; h--) {
    const b = await ctx.chain.blocks.getBlock(h);
    if (b) blocks.push(blockSummary(b));
  }
  return { blocks, page, limit, total: ctx.chain.height + 1 };
}

export async function getBlock(ctx: NodeContext, height: number): Promise<Block> {
  const b = await blockAtHeight(ctx, height);
  if (!b) throw blockNotFound(ctx, height);
  return b;
}

/** A missing block; below the height a node that joined by state sync starts at, saying so (never a wrong answer). */
function blockNotFound(ctx: Pick<NodeContext, 'chain'>, height?: number): NotFoundError {
  const earliest = ctx.chain.blocks.earliest;
  if (height !== undefined && height > 0 && height < earliest) return new BeforeEarliestBlockError(earliest);
  return new NotFoundError('block not found');
}

/** Which block a reader asks for (gRPC GetBlock's selector). */
export type BlockSelector = { height: number } | { hash: string } | { latest: true } | { finalized: true };

/** Any stored block (not only the in-memory window) by height, hash, head or finality; NotFoundError otherwise. */
export async function findBlock(ctx: Pick<NodeContext, 'chain' | 'consensus'>, sel: BlockSelector): Promise<Block> {
  if ('latest' in sel) return ctx.chain.head;
  const ref: BlockRef = 'height' in sel ? sel.height : 'hash' in sel ? { hash: sel.hash } : 'finalized';
  const b = await resolveBlock(ctx, ref);
  if (!b) throw blockNotFound(ctx, 'height' in sel ? sel.height : undefined);
  return b;
}

/** Stored blocks from..to (inclusive, clamped to the chain), ascending: the window from memory, the rest from disk. */
export function readBlocks(ctx: ChainContext, from: number, to: number): Promise<Block[]> {
  return ctx.chain.blocks.readRange(from, to);
}

/**
 * findBlock without waiting when the block is in memory (the head or the window): the block, or undefined when
 * finding it needs the store (findBlock then). Throws NotFoundError for a height above the head.
 */
export function findRecentBlock(ctx: Pick<NodeContext, 'chain' | 'consensus'>, sel: BlockSelector): Block | undefined {
  if ('latest' in sel) return ctx.chain.head;
  if ('hash' in sel) return undefined;
  const height = 'height' in sel ? sel.height : ctx.consensus.finalizedHeight();
  if (height > ctx.chain.height) throw new NotFoundError('block not found');
  return ctx.chain.blocks.recentBlock(height) ?? undefined;
}

/** A block with its transactions; a BFT (version 2) block adds the double-sign evidence it includes. */
export function blockDetail(b: Block): Record<string, unknown> {
  const detail: Record<string, unknown> = { ...blockSummary(b), transactions: b.transactions };
  if (b.version >= 2) {
    detail.evidence = b.evidence.map((bytes) => {
      const e = decodeEvidence(bytes);
      return {
        id: evidenceId(e),
        validator: e.a.validator,
        height: e.a.height,
        round: e.a.round,
        type: e.a.type,
        block_hashes: [e.a.block_hash, e.b.block_hash],
      };
    });
  }
  return detail;
}

/** The block record, for interfaces that shape blocks themselves (JSON-RPC). */
export type { Block } from '../chain/index.js';

/** Blocks of one list page, newest first (`offset` blocks below the head). */
export async function blocksPage(ctx: NodeContext, offset: number, limit: number): Promise<Block[]> {
  const top = ctx.chain.height - offset;
  if (top < 0) return [];
  const blocks = await ctx.chain.blocks.readRange(Math.max(0, top - limit + 1), top);
  return blocks.reverse();
}

/** The head block. */
export function headBlock(ctx: ChainContext): Block {
  return ctx.chain.head;
}

/** The block at a height if it is in the in-memory window, else null (callers that may go to disk use readBlocks). */
export function recentBlock(ctx: ChainContext, height: number): Block | null {
  return ctx.chain.blocks.recentBlock(height);
}

/** The blocks held in memory, newest first (no disk read). */
export function recentBlocks(ctx: ChainContext): IterableIterator<Block> {
  return ctx.chain.blocks.recentBlocks();
}

/** Receipts of the blocks at these heights (null where no block): the window from memory, the rest in one multi-get. */
export function receiptsAt(ctx: ChainContext, heights: readonly number[]): (readonly ReceiptRecord[] | null)[] {
  return ctx.chain.blocks.receiptsOf(heights);
}

/** The active validator set of the next height (who may propose it), read from the head's state. */
export function nextValidatorSet(ctx: ChainContext): readonly ActiveValidator[] {
  return validatorSetAt(ctx.chain.params, ctx.chain.state, ctx.chain.height + 1);
}

/**
 * A value kept per chain until the chain's next rollback (dev chain), which may rewrite the blocks it describes:
 * `make` runs on first use and again after a rollback. Consumer: the explorer's call-tree cache.
 */
export function perChainUntilRollback<T>(ctx: ChainContext, store: WeakMap<object, T>, make: () => T): T {
  const chain = ctx.chain;
  const kept = store.get(chain);
  if (kept !== undefined) return kept;
  const made = make();
  store.set(chain, made);
  const forget = (): void => {
    store.delete(chain);
    chain.off('rollback', forget);
  };
  chain.on('rollback', forget);
  return made;
}
