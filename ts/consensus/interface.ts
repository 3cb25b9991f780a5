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

export interface ProducedBlockInfo {
  height: number;
  txCount: number;
  executeMs: number;
  stateRootMs: number;
  commitMs: number;
  totalMs: number;
}
