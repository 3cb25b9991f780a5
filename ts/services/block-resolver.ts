/**
 * The one block resolver of every transport: which height a tag, number or hash names, and that block.
 * Transports parse their own parameters (JSON-RPC tags and EIP-1898 objects, gRPC selectors, REST paths)
 * into a BlockRef and word the "not found" their own way; the reading happens here.
 */
import { type Block, NoSuchHeightError, blockGasLimitOf } from '../chain/index.js';
import type { ConsensusEngine } from '../consensus/interface.js';
import { NotFoundError } from '../util/index.js';
import type { NodeContext } from './context.js';

/** A block named by tag or number (JSON-RPC's block parameter, after parsing). */
export type BlockTag = 'earliest' | 'latest' | 'pending' | 'safe' | 'finalized' | number;

/** A block named by tag, number or hash (EIP-1898's { blockHash } included). */
export type BlockRef = BlockTag | { hash: string };

/** What resolving a reference reads: the chain, and the engine's finalized height for `safe` / `finalized`. */
export type ResolverContext = Pick<NodeContext, 'chain'> & { consensus: Pick<ConsensusEngine, 'finalizedHeight'> };

/** The chain facts the Ethereum shapes need (eth-shapes.ts's chainId, hardfork and block gas limit). */
export interface EthChainFacts {
  chainId: number;
  evmHardfork: string;
  blockGasLimit: bigint;
}

export function ethChainFacts(ctx: Pick<NodeContext, 'chain'>): EthChainFacts {
  const p = ctx.chain.params;
  return { chainId: p.chainId, evmHardfork: p.evmHardfork, blockGasLimit: blockGasLimitOf(p) };
}

/** The chain id (EIP-155), as eth_chainId, net_version and signing checks read it. */
export function chainIdOf(ctx: Pick<NodeContext, 'chain'>): number {
  return ctx.chain.params.chainId;
}

/** The head's height. */
export function headHeight(ctx: Pick<NodeContext, 'chain'>): number {
  return ctx.chain.height;
}

/** Whether the next block runs the EVM (the EVM activation height is reached). */
export function evmActiveNext(ctx: Pick<NodeContext, 'chain'>): boolean {
  return ctx.chain.height + 1 >= ctx.chain.params.activation.evm;
}

/** The oldest height whose state the node keeps (older state reads answer HistoryUnavailableError). */
export function oldestStateHeight(ctx: Pick<NodeContext, 'chain'>): number {
  return ctx.chain.blocks.history.oldest;
}

/**
 * The height a tag names. `safe` and `finalized` are the finalized height (under BFT every committed block
 * is final, so they equal `latest`; the engine's view is asked, not assumed). A number is itself (it may be
 * above the head: callers decide what that means).
 */
export function heightOfTag(ctx: ResolverContext, tag: BlockTag | undefined): number {
  if (tag === 'earliest') return 0;
  if (tag === 'safe' || tag === 'finalized') return ctx.consensus.finalizedHeight();
  if (tag === undefined || typeof tag === 'string') return ctx.chain.height;
  return tag;
}

/** The height of the stored block with this hash; null when unknown. */
export function heightOfHash(ctx: Pick<NodeContext, 'chain'>, hash: string): Promise<number | null> {
  return ctx.chain.blocks.heightOfHash(hash);
}

/** The height a reference names; null for an unknown hash or a height above the head. */
export async function resolveBlockHeight(ctx: ResolverContext, ref: BlockRef): Promise<number | null> {
  const h = typeof ref === 'object' ? await heightOfHash(ctx, ref.hash) : heightOfTag(ctx, ref);
  return h === null || h > ctx.chain.height ? null : h;
}

/** The stored block at a height; null above the head or when the store has none. */
export async function blockAtHeight(ctx: Pick<NodeContext, 'chain'>, height: number): Promise<Block | null> {
  return height > ctx.chain.height ? null : ((await ctx.chain.blocks.getBlock(height)) ?? null);
}

/** The block a reference names; null when it does not exist (yet). */
export async function resolveBlock(ctx: ResolverContext, ref: BlockRef): Promise<Block | null> {
  const h = await resolveBlockHeight(ctx, ref);
  return h === null ? null : blockAtHeight(ctx, h);
}

/**
 * The height whose state a read at `ref` uses; undefined for the head's own state (absent, `latest`, `pending`, or
 * the head's height). The one rule of reads at a height: a height above the head is NoSuchHeightError naming the
 * head (404 / -32000 / NOT_FOUND), an unknown hash NotFoundError. History kept is checked by the read (stateAt).
 */
export async function stateHeightOfRef(ctx: ResolverContext, ref: BlockRef | undefined): Promise<number | undefined> {
  if (ref === undefined || ref === 'latest' || ref === 'pending') return undefined;
  const height = typeof ref === 'object' ? await heightOfHash(ctx, ref.hash) : heightOfTag(ctx, ref);
  if (height === null) throw new NotFoundError('block not found');
  const head = ctx.chain.height;
  if (height > head) throw new NoSuchHeightError(height, head);
  return height === head ? undefined : height;
}
