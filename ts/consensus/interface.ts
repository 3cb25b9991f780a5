/** What the node's wiring needs from a consensus engine (PoA now, DPoS+BFT later). */
export interface ConsensusEngine {
  readonly name: string;
  start(): void;
  /** Stop producing; resolves once any block in flight is committed or abandoned. */
  stop(): Promise<void>;
  /** Height finalized under this engine's rules (PoA: the head). */
  finalizedHeight(): number;
  /** Address expected to propose the next block. */
  nextProposer(): string | null;
}

/**
 * Default gas a proposer packs into a block (`--block-pack-gas`): what the slowest measured mix, a tight
 * loop, executes in at most ~0.6 s of a 1 s slot on the shared bench machine (bench/RESULTS.md "EVM gas
 * throughput"; docs/evm.md "Block time"). The block gas limit (30M) stays the validity rule; the block's
 * first EVM transaction may use all of it.
 */
export const DEFAULT_PACK_GAS_LIMIT = 5_000_000n;

export interface ProducedBlockInfo {
  height: number;
  txCount: number;
  executeMs: number;
  stateRootMs: number;
  commitMs: number;
  totalMs: number;
  /** EVM gas used by the block. */
  gasUsed: bigint;
  /** How long after its slot ended the block was committed; > 0: the next slot is lost (logged as a warning). */
  lateMs: number;
}
