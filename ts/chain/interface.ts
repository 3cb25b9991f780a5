/**
 * The contract of ts/chain that the query layer relies on (reth's BlockReader / StateProviderFactory are the
 * model): what a query may read of the chain, each member naming who consumes it. `Chain` and its `BlockStore`
 * implement these structurally; ts/node hands the concrete chain to `NodeContext.chain` typed as ChainReader, so no
 * transport or query reaches a store, the database or a method that extends or rewinds the chain. The one place
 * that asks for the chain behind a reader is ts/indexes (indexed-chain.ts): its on-disk indexes live in the chain's
 * database and follow its commits.
 */
import type { ReceiptRecord } from '../execution/index.js';
import type { BlockEnv } from '../execution/index.js';
import type { HeadStateReader, StateChanges } from '../state/interface.js';
import type { LogSource, TxLocation } from './block-store.js';
import type { Block, ConsensusPhase } from './block.js';
import type { ChainEvents } from './chain-types.js';
import type { DayRecord } from './daily-aggregates.js';
import type { IndexedEvent } from './event-index.js';
import type { LogTerms } from './log-index.js';
import type { ChainParams } from './params.js';
import type { HistoricalStateView } from './state-history.js';

/** The committed blocks, receipts and their read-model indexes, read only. Consumer: ts/services (the queries). */
export interface BlockReader {
  /** The lowest height with a block besides genesis: above 0 on a node that joined by state sync. Consumer: sync_info. */
  readonly earliest: number;
  /** The block at a height, or null outside the chain. Consumers: the block resolver, tx and receipt lookup, most queries. */
  getBlock(height: number): Promise<Block | null>;
  /** Blocks at these heights (null where none): the window from memory, the rest in one multi-get. Consumers: history, token lists. */
  getBlocks(heights: readonly number[]): (Block | null)[];
  /** The blocks from..to (inclusive) in order. Consumers: block lists (chain-queries.ts), history, the explorer, the chain index. */
  readRange(from: number, to: number): Promise<Block[]>;
  /** A block of the in-memory window, or null (no disk read). Consumers: chain-queries.ts (findRecentBlock, recentBlock). */
  recentBlock(height: number): Block | null;
  /** The in-memory window's blocks, newest first. Consumers: chain-info.ts (block times), chain-queries.ts (recentBlocks). */
  recentBlocks(): IterableIterator<Block>;
  /** A block's receipts, or null when unknown. Consumers: receipts, traces, logs filters, verified-contracts.ts. */
  receipts(height: number): Promise<readonly ReceiptRecord[] | null>;
  /** Receipts of the blocks at these heights (null where no block), like getBlocks. Consumer: the explorer (services/chain-queries.ts). */
  receiptsOf(heights: readonly number[]): (readonly ReceiptRecord[] | null)[];
  /** Where a committed transaction is, or null. Consumers: the tx lookup (tx-queries.ts), explorer, verified-contracts.ts. */
  txLocation(txid: string): Promise<TxLocation | null>;
  /** The height of a block hash, or null. Consumer: the block resolver (hash and EIP-1898 `blockHash`). */
  heightOfHash(hash: string): Promise<number | null>;
  /** Transactions an address sent or received. Consumers: GET /address/:a/transactions, explorer address pages. */
  txCount(address: string): number;
  /** A page of an address's transactions, newest first. Consumers: history-queries.ts, address-queries.ts. */
  addressHistory(address: string, offset: number, limit: number): Promise<TxLocation[]>;
  /** An address's first transaction, or null. Consumers: address-queries.ts (first seen), the chain index. */
  firstAddressTx(address: string): Promise<TxLocation | null>;
  /** The transaction that created a contract, or null. Consumer: verified-contracts.ts. */
  contractCreation(address: string): Promise<TxLocation | null>;
  /** A day's aggregates (blocks, transactions, fees). Consumer: stats-queries.ts. */
  dayRecord(day: number): DayRecord;
  /** A page of the native events indexed under a term. Consumers: token, NFT and staking reward history queries. */
  indexedEvents(term: string, offset: number, limit: number): Promise<IndexedEvent[]>;
  /** How many events a term has. Consumers: token-queries.ts, nft-queries.ts (list totals). */
  readonly eventIndex: { count(term: string): number };
  /** The oldest height whose state the history keeps. Consumers: the block resolver (historical state), the state index. */
  readonly history: { readonly oldest: number };
  /** The lowest height of the block window (0: the whole chain is kept). Consumer: chain-info.ts (GET /chain/info). */
  readonly windowStart: number;
  /** Heights in from..to whose blooms may hold the terms. Consumer: eth_getLogs and log filters (log-queries.ts). */
  readonly logIndex: { candidates(from: number, to: number, terms: LogTerms): Promise<number[]> };
  /** Each height's block and receipts, for matching logs. Consumer: log-queries.ts. */
  logSources(heights: readonly number[]): Promise<LogSource[]>;
}

/** The canonical chain as every query sees it: head, parameters, state, blocks. Consumer: ts/services. */
export interface ChainReader {
  /** The chain's parameters (chain id, validators, activation heights, epoch length). Consumer: nearly every query. */
  readonly params: ChainParams;
  /** The head block. Consumers: chain info, readiness, the explorer, consensus queries, proofs. */
  readonly head: Block;
  /** The head's height. Consumers: every query that bounds a height (the block resolver first). */
  readonly height: number;
  /** The head's state, read only. Consumers: balance, nonce, token, staking and NFT queries; proofs; calls at the head. */
  readonly state: HeadStateReader;
  /** The blocks and their indexes, read only. Consumer: ts/services. */
  readonly blocks: BlockReader;
  /**
   * A read-only view of the state after block `height`; release it when done. Throws NoSuchHeightError above the
   * head, HistoryUnavailableError below the history kept. Consumer: the queries at a height (services/state-at.ts).
   */
  stateAt(height: number): Promise<HistoricalStateView>;
  /** The consensus phase (PoA or BFT) and the set at a height. Consumers: chain-queries.ts, consensus and staking queries. */
  consensusAt(height: number): ConsensusPhase;
  /** The EVM block environment of a height. Consumers: eth_call, eth_estimateGas, eth_simulateV1, traces. */
  blockEnv(height: number, proposer: string, timestamp: number): BlockEnv;
  /** The node's clock in Unix seconds (tests and the dev chain move it). Consumer: the pending block's env (evm-queries.ts). */
  now(): number;
  /** Resolves once no block is being applied. Consumers: queries that read the trie and the blocks together. */
  settled(): Promise<void>;
  /**
   * The dev chain's state writes folded into the block at `height` (null: none, or not the dev chain). Consumers:
   * traces of a dev block (trace-queries.ts), chain validation.
   */
  devPatchAt(height: number): Promise<StateChanges | null>;
  /** Follow committed blocks. Consumers: the event feed, filters, the explorer's trace cache, the indexes. */
  on(event: 'block', listener: (...args: ChainEvents['block']) => void): unknown;
  /** Follow rollbacks. Consumers: the event feed, filters, verified contracts, the indexes. */
  on(event: 'rollback', listener: (...args: ChainEvents['rollback']) => void): unknown;
  /** Stop following blocks. Consumers: as for on('block'). */
  off(event: 'block', listener: (...args: ChainEvents['block']) => void): unknown;
  /** Stop following rollbacks. Consumers: as for on('rollback'). */
  off(event: 'rollback', listener: (...args: ChainEvents['rollback']) => void): unknown;
}
