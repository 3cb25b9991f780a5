import { EventEmitter } from 'node:events';
import { crypto } from '../crypto/index.js';
import { type BlockEnv, type PackLimit, encodeReceipts, executeBlock, operationEnv } from '../execution/index.js';
import { type KeyPair, signDigest, type NativeRuleContext, type SignedTransaction } from '../ledger/index.js';
import { type StateChanges, StateOverlay, StateStore } from '../state/index.js';
import type { KvStore } from '../storage/index.js';
import { fromHex, toHex } from '../util/index.js';
import {
  BFT_HEADER_VERSION,
  type Block,
  type BlockHeader,
  type ConsensusData,
  type ConsensusPhase,
  HEADER_VERSION,
  blockHash,
  evidenceHash,
  lastCommitHash,
  receiptsRootOf,
  txMerkleRoot,
} from './block.js';
import { BlockStore } from './block-store.js';
import { NO_CONSENSUS_DATA, openChainStore } from './chain-open.js';
import { rollbackHeld } from './chain-rollback.js';
import {
  type ChainEvents,
  type ChainOptions,
  type Execution,
  NoSuchHeightError,
  type Proposal,
  StaleExecutionError,
} from './chain-types.js';
import { applyEvidence, decodeEvidence } from './evidence.js';
import { evmHardforkAt } from './evm-hardfork.js';
import { PendingDevWrites, readDevPatch } from './dev-patches.js';
import type { ChainReader } from './interface.js';
import type { HistoricalStateView } from './state-history.js';
import { type ChainParams, ledgerParams } from './params.js';
import { consensusPhaseAt } from './schedule.js';
import { TrieCheckpoints, type TrieStart } from './trie-checkpoint.js';
import { type VerifiedAhead, verifyBlocksAhead } from './verify-ahead.js';
import {
  type AppliedBlock,
  type BlockContext,
  type CheckedBlock,
  checkedOf,
  lastCommitEnv,
  txRuleContext,
  validateAndApply,
  validateChecked,
  validateExecuted,
} from './validate-block.js';

/** Benches and tests that load chain.js alone find these here too. */
export type { Execution, Proposal } from './chain-types.js';

/**
 * The canonical chain: head, state, and the rules to extend it. Block production and
 * consensus drive it through propose()/commit(); queries read it.
 */
export class Chain extends EventEmitter<ChainEvents> implements ChainReader {
  /** The state: values in the `S` table behind a bounded cache, key and leaf hashes in the trie. */
  readonly state: StateStore;
  readonly blocks: BlockStore;
  private headBlock!: Block;
  /** Set while a proposal's state is in the trie but not yet the head (between propose and commit/abandon). */
  private pending: { done: Promise<void>; resolve: () => void } | null = null;
  /** Dev chain only: state written between blocks, folded into the next block (dev-patches.ts). */
  readonly devWrites: PendingDevWrites | null;
  /** Time spent by imported blocks in each step, summed (sync reports it per catch-up pass). */
  readonly importTimings = { validate_ms: 0, write_ms: 0, listeners_ms: 0 };
  /** How the state trie came back at open (checkpoint, rebuild from `S`, or genesis). */
  trieStart: TrieStart | null = null;
  private readonly checkpoints: TrieCheckpoints | null;
  /** Set when a run's write failed (importRun): memory is ahead of the store, so no block is applied any more. */
  private failure: Error | null = null;
  /** The node's clock in Unix seconds (block timestamps, the future-drift rules); tests move it. */
  now: () => number = () => Math.floor(Date.now() / 1000);

  constructor(
    readonly params: ChainParams,
    db: KvStore,
    windowSize: number,
    opts: ChainOptions = {},
  ) {
    super();
    this.blocks = new BlockStore(db, windowSize, opts.history);
    this.state = new StateStore({ db, cacheBytes: opts.stateCacheBytes });
    const c = opts.trieCheckpoint;
    this.checkpoints = c ? new TrieCheckpoints(c, this.state, (h, err, ms) => this.emit('checkpoint', h, err, ms)) : null;
    this.devWrites = params.network === 'dev' ? new PendingDevWrites(db) : null;
  }

  get head(): Block {
    return this.headBlock;
  }

  get height(): number {
    return this.headBlock.index;
  }

  consensusAt(height: number): ConsensusPhase {
    return consensusPhaseAt(this.params, this.state, height);
  }

  /** The transaction rules' context for inclusion at height, judged at time now (Unix seconds). */
  txRuleContext(height: number, now: number): NativeRuleContext {
    return txRuleContext(this.params, height, now);
  }

  /** What block validation needs to check a child of the head against the live state. */
  blockContext(): BlockContext {
    return {
      params: this.params,
      parent: this.headBlock,
      state: this.state,
      env: (h, proposer, ts) => this.blockEnv(h, proposer, ts),
      now: this.now(),
    };
  }

  /**
   * Open the chain: resume from disk (the trie rebuilt from the `S` table, no value kept in memory, and
   * checked against the head's state root) or write genesis.
   */
  async open(): Promise<void> {
    const opened = await openChainStore(this.params, this.blocks, this.state, this.devWrites, this.checkpoints?.path ?? null);
    this.headBlock = opened.head;
    this.trieStart = opened.trieStart;
  }

  /**
   * Write a checkpoint of the head's trie now (clean shutdown), after any being written; false when there is
   * nothing to write it with (no checkpoint configured, a JS trie, dev writes not yet in a block). Throws when
   * the write fails.
   */
  async checkpointNow(): Promise<boolean> {
    const head = (): Block | null => ((this.devWrites?.size ?? 0) > 0 ? null : this.headBlock);
    return (await this.checkpoints?.writeNow(() => this.settled(), head)) ?? false;
  }

  /**
   * Dev chain: write state outside any block (anvil_setBalance and friends). Visible at once; recorded with
   * the next block, whose state root covers it (dev-patches.ts, docs/dev-chain.md).
   */
  async writeDevState(writes: StateChanges): Promise<void> {
    if (!this.devWrites) throw new Error('state can be written outside blocks only on the dev chain');
    await this.acquire();
    try {
      await this.devWrites.apply(this.state, writes);
    } finally {
      this.settle();
    }
  }

  /** Execution environment of the block at height (shared by production and replay). */
  blockEnv(height: number, proposer: string, timestamp: number): BlockEnv {
    return {
      height,
      timestamp,
      proposer,
      chainId: this.params.chainId,
      hardfork: evmHardforkAt(this.params, height),
      tokenomicsV2Height: this.params.activation.tokenomicsV2,
      evmActivationHeight: this.params.activation.evm,
      ledger: ledgerParams(this.params),
      devChain: this.params.network === 'dev',
      ...(this.params.unlimitedContractSize ? { unlimitedContractSize: true } : {}),
      ...(this.params.blockGasLimit !== undefined ? { gasLimit: this.params.blockGasLimit } : {}),
      blockHash: async (h) => {
        const b = await this.blocks.getBlock(h);
        return b ? fromHex(b.hash) : null;
      },
    };
  }

  /**
   * Execute txs on top of the head into an overlay. The state is untouched, so transaction
   * admission may run while this awaits; seal() then applies the result in one synchronous step.
   * consensusData (BFT proposers): the parent's commit certificate and evidence to include; the
   * evidence is applied before the transactions, as block validation does.
   */
  async execute(
    txs: readonly SignedTransaction[],
    proposer: string,
    timestamp: number,
    pack?: PackLimit,
    consensusData: ConsensusData = NO_CONSENSUS_DATA,
  ): Promise<Execution> {
    // Held while executing: a block import or proposal check must not change the state under the reads.
    await this.acquire();
    try {
      const t0 = performance.now();
      const height = this.height + 1;
      const ts = Math.max(timestamp, this.headBlock.timestamp);
      const overlay = new StateOverlay(this.state);
      // Consensus data exists in BFT blocks only (seal() leaves it out elsewhere, so execution must too).
      const data = this.consensusAt(height) === 'DPoS+BFT' ? consensusData : NO_CONSENSUS_DATA;
      const env = { ...this.blockEnv(height, proposer, ts), pack, ...lastCommitEnv(data.last_commit) };
      applyEvidence(overlay, data.evidence.map(decodeEvidence), operationEnv(env));
      const result = await executeBlock(env, overlay, this.state, txs);
      return { height, timestamp: ts, proposer, overlay, result, executeMs: performance.now() - t0, consensusData: data };
    } finally {
      this.settle();
    }
  }

  /**
   * Apply an execution to the state trie, build the signed block and pass it through block validation
   * (which reuses the execution). The trie holds it until commit/abandon. Synchronous: the caller
   * updates its mempool in the same tick. Throws InvalidBlockError (trie untouched) if the block breaks a rule.
   */
  seal(exec: Execution, proposer: KeyPair, round = 0, opts: { proposal?: boolean } = {}): Proposal {
    if (this.pending) throw new StaleExecutionError('another block is being applied');
    if (exec.height !== this.height + 1)
      throw new StaleExecutionError(`stale execution for height ${exec.height}, head is ${this.height}`);
    const t1 = performance.now();
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    this.pending = { done, resolve };
    const ctx = this.blockContext();
    // The phase is the parent state's (the block's own changes may choose the next epoch's set).
    const consensus = this.consensusAt(exec.height);
    const undo = this.state.applyChanges(exec.overlay.changes);
    const stateRoot = toHex(this.state.root());
    const t2 = performance.now();
    const { result } = exec;
    const bft = consensus === 'DPoS+BFT';
    const data = bft ? exec.consensusData : NO_CONSENSUS_DATA;
    const header: BlockHeader = {
      version: bft ? BFT_HEADER_VERSION : HEADER_VERSION,
      index: exec.height,
      previous_hash: this.headBlock.hash,
      timestamp: exec.timestamp,
      tx_count: result.included.length,
      validator: proposer.address,
      merkle_root: txMerkleRoot(result.included),
      state_root: stateRoot,
      receipts_root: receiptsRootOf(encodeReceipts(result.receipts)),
      round,
      gas_used: result.gasUsed,
      logs_bloom: toHex(result.logsBloom),
      consensus,
      last_commit_hash: bft ? lastCommitHash(data.last_commit) : '',
      evidence_hash: bft ? evidenceHash(data.evidence) : '',
    };
    const hash = blockHash(header);
    const block: Block = {
      ...header,
      hash,
      signature: toHex(signDigest(fromHex(hash), proposer.privateKey)),
      justification: new Uint8Array(0),
      transactions: result.included,
      ...data,
    };
    let applied: AppliedBlock;
    try {
      applied = validateExecuted(ctx, block, exec, undo, opts.proposal === true);
    } catch (err) {
      this.settle();
      throw err;
    }
    return { ...applied, timings: { executeMs: exec.executeMs, stateRootMs: t2 - t1 } };
  }

  /**
   * Check a BFT proposal (a block without its commit certificate yet) under every block rule, executing
   * it on the live state and dropping the result again; the outcome is kept for commitChecked, so a
   * decided block is not executed twice. Throws InvalidBlockError.
   */
  async checkProposal(block: Block): Promise<CheckedBlock> {
    await this.acquire();
    try {
      const parentHash = this.headBlock.hash;
      const applied = await validateAndApply(this.blockContext(), block, { proposal: true });
      this.state.revert(applied.undo);
      return { parentHash, ...checkedOf(applied) };
    } finally {
      this.settle();
    }
  }

  /**
   * Commit a decided BFT block (with its commit certificate) whose proposal was checked on the current
   * head: the header rules and the certificate are verified, the checked changes applied and committed
   * atomically. Throws InvalidBlockError (nothing persists) when anything differs.
   */
  async commitChecked(block: Block, checked: CheckedBlock): Promise<AppliedBlock> {
    await this.acquire();
    let applied: AppliedBlock;
    try {
      applied = validateChecked(this.blockContext(), block, checked);
    } catch (err) {
      this.settle();
      throw err;
    }
    await this.commit(applied);
    return applied;
  }

  /**
   * Import a block made elsewhere (a peer, or a test): validated against the head under every rule,
   * executed, and committed atomically; on any failure nothing of it persists (InvalidBlockError).
   */
  async importBlock(block: Block): Promise<AppliedBlock> {
    await this.acquire();
    const t0 = performance.now();
    let applied: AppliedBlock;
    try {
      applied = await validateAndApply(this.blockContext(), block);
    } catch (err) {
      this.settle();
      throw err;
    }
    this.importTimings.validate_ms += performance.now() - t0;
    await this.commit(applied, this.importTimings);
    return applied;
  }

  /**
   * Import consecutive blocks made elsewhere (a syncing node's run from one peer): each validated against the
   * head under every rule and executed as importBlock does, announced ('block') with the state at that block,
   * and all of them committed in ONE atomic write (reth's staged sync; the saving over one write per block is
   * within this machine's noise, bench/RESULTS.md "Block sync"). The head on disk moves with that write: a crash keeps all of the run or none, never
   * a head past a committed block. The first invalid block ends the run: the blocks before it are committed,
   * then its InvalidBlockError is thrown. Returns the blocks committed. A failed write leaves the in-memory
   * chain ahead of the store: the chain then refuses every later block (the node must restart, and resumes
   * from its last committed block).
   */
  async importRun(blocks: readonly Block[]): Promise<number> {
    if (this.devWrites) {
      // Dev chains fold their writes into the next block's batch: block by block.
      for (const b of blocks) await this.importBlock(b);
      return blocks.length;
    }
    await this.acquire();
    const run = this.blocks.startRun();
    const applied: AppliedBlock[] = [];
    let invalid: unknown = null;
    /** A listener's exception: thrown once the run is committed, as commit() lets it through after its write. */
    let listenerError: unknown = null;
    try {
      for (const block of blocks) {
        const t0 = performance.now();
        let a: AppliedBlock;
        try {
          a = await validateAndApply(this.blockContext(), block);
        } catch (err) {
          invalid = err;
          break;
        }
        const t1 = performance.now();
        run.add(a.block, a.changes, a.result.receipts, a.encodedReceipts, a.undo);
        this.headBlock = a.block;
        applied.push(a);
        const t2 = performance.now();
        try {
          this.emit('block', a.block, a.result, a.undo);
        } catch (err) {
          listenerError ??= err;
        }
        this.importTimings.validate_ms += t1 - t0;
        this.importTimings.write_ms += t2 - t1;
        this.importTimings.listeners_ms += performance.now() - t2;
      }
      const t = performance.now();
      await run.write();
      this.importTimings.write_ms += performance.now() - t;
    } catch (err) {
      this.failure = new Error(
        `the chain stopped at a failed write of blocks ${applied[0]?.block.index}..${this.headBlock.index}: ${(err as Error).message}; restart the node`,
      );
      this.settle();
      throw this.failure;
    }
    for (const a of applied) this.state.markDurable(a.changes);
    // A checkpoint due within the run is taken at its end (the trie must be the durable head's).
    const last = applied.at(-1)?.block;
    if (last && applied.some((a) => this.checkpoints?.due(a.block.index))) this.checkpoints?.start(last);
    if (last) this.emit('durable', last);
    this.settle();
    if (invalid) throw invalid;
    if (listenerError) throw listenerError;
    return applied.length;
  }

  /**
   * Verify the signatures of blocks about to be imported on top of the head in one parallel batch
   * (a syncing node's run of blocks); their import then finds that work done (verify-ahead.ts).
   */
  verifyAhead(blocks: readonly Block[]): Promise<VerifiedAhead> {
    return verifyBlocksAhead(this.params, this.state, this.headBlock, blocks);
  }

  /** execute + seal in one call (tests, benches, single-validator production). */
  async propose(txs: readonly SignedTransaction[], proposer: KeyPair, timestamp: number, round = 0): Promise<Proposal> {
    return this.seal(await this.execute(txs, proposer.address, timestamp), proposer, round);
  }

  /** Persist a proposal atomically and make it the head. On a write failure the trie is rolled back. */
  async commit(p: AppliedBlock, timings?: { write_ms: number; listeners_ms: number }): Promise<void> {
    const ownUndo = p.undo;
    const t0 = performance.now();
    // Dev writes made since the last block become part of this one (its changes, undo and a replay record).
    const extra = this.devWrites?.foldInto(p.block.index, p) ?? [];
    try {
      await this.blocks.commit(p.block, p.changes, p.result.receipts, p.encodedReceipts, p.undo, extra);
    } catch (err) {
      this.state.revert(ownUndo);
      this.settle();
      throw err;
    }
    this.state.markDurable(p.changes);
    this.devWrites?.clear();
    this.headBlock = p.block;
    // The trie is the new head's until settle(): a checkpoint due takes its copy now and writes it off-thread.
    if (this.checkpoints?.due(p.block.index)) this.checkpoints.start(p.block);
    this.emit('durable', p.block);
    this.settle();
    const t1 = performance.now();
    this.emit('block', p.block, p.result, p.undo);
    if (timings) {
      timings.write_ms += t1 - t0;
      timings.listeners_ms += performance.now() - t1;
    }
  }

  /**
   * A read-only view of the state after block `height` (any height from the oldest the history keeps up
   * to the head), unchanged while later blocks are committed. Release it when done.
   * Throws NoSuchHeightError above the head, HistoryUnavailableError below the history kept.
   */
  async stateAt(height: number): Promise<HistoricalStateView> {
    await this.settled();
    const head = this.height;
    if (!Number.isSafeInteger(height) || height < 0 || height > head) throw new NoSuchHeightError(height, head);
    return this.blocks.history.view(height, head, this.state.snapshot());
  }

  /**
   * Make the block at `height` the head again: later blocks, their indexes and change sets are removed and
   * the state they changed is put back, in one atomic batch (docs/storage.md, "Rollback"). Views opened
   * before stop answering (StaleStateViewError). Dev-chain writes not yet in a block are dropped first (they
   * are part of the head being left). Emits `rollback`. The mempool is the caller's to reconcile.
   */
  async rollbackTo(height: number): Promise<void> {
    await this.acquire();
    let done: { changed: Set<string>; removed: boolean };
    try {
      done = await rollbackHeld(this, this.height, height, (b) => {
        this.headBlock = b;
      });
    } finally {
      this.settle();
    }
    if (done.removed || done.changed.size > 0) this.emit('rollback', height, done.changed);
  }

  /** Drop a proposal that will not be committed. */
  abandon(p: AppliedBlock): void {
    this.state.revert(p.undo);
    this.settle();
  }

  private settle(): void {
    const p = this.pending;
    this.pending = null;
    p?.resolve();
  }

  /** Wait until no block is being applied, then hold the trie (in the same tick, so no one else can). */
  private async acquire(): Promise<void> {
    while (this.pending) await this.pending.done;
    if (this.failure) throw this.failure;
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    this.pending = { done, resolve };
  }

  /** The dev chain's state writes folded into the block at `height`; null off the dev chain or when there were none. */
  async devPatchAt(height: number): Promise<StateChanges | null> {
    return this.devWrites ? readDevPatch(this.blocks.db, height) : null;
  }

  /** Resolves when the state trie equals the head's state (no proposal in flight). */
  async settled(): Promise<void> {
    while (this.pending) await this.pending.done;
  }

  /** Verify a block's proposer signature against the validator's public key. */
  static verifyBlockSignature(block: Block, publicKeyHex: string): boolean {
    if (block.signature.length !== 128) return false;
    return crypto().verify(fromHex(block.signature), fromHex(block.hash), fromHex(publicKeyHex));
  }
}
