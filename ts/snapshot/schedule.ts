/**
 * Snapshots every `interval` finalized blocks (`--snapshot-interval`, `--snapshot-keep`): on the chain's
 * `durable` event of a due height a snapshot is started (its iterator opened in that same turn), one at a time,
 * and the oldest beyond `keep` are removed once it is published (docs/p2p.md, "State sync", "Taking").
 */
import { join } from 'node:path';
import type { Block, Chain } from '../chain/index.js';
import type { KvStore } from '../storage/index.js';
import type { SnapshotManifest } from './format.js';
import { SNAPSHOTS_DIR, SnapshotDirectory } from './store.js';
import { type CutLimits, SnapshotAbort, startSnapshot } from './take.js';

/** `--snapshot-keep` by default. */
export const DEFAULT_SNAPSHOT_KEEP = 2;
/**
 * `--snapshot-interval` on testnet and mainnet (the dev chain takes none): with 1 s blocks a snapshot every ~17
 * minutes, as often as the trie checkpoint; a joining node then replays at most that many blocks after it.
 */
export const DEFAULT_SNAPSHOT_INTERVAL = 1000;

export interface SnapshotScheduleOptions {
  /** The node's data directory (snapshots go to `<dataDir>/snapshots`). */
  dataDir: string;
  /** A snapshot after every block whose height is a multiple of this (0: none). */
  interval: number;
  /** Snapshots kept (the newest). */
  keep: number;
  /** How chunks are cut (take.ts's defaults when absent). */
  limits?: CutLimits;
  log?: (level: 'info' | 'warn' | 'debug', fields: Record<string, unknown>, msg: string) => void;
}

export class SnapshotSchedule {
  readonly directory: SnapshotDirectory;
  private running: Promise<SnapshotManifest | null> | null = null;
  private readonly abort = new SnapshotAbort();
  private readonly listener = (block: Block): void => this.onDurable(block);
  /** A rollback (dev chain, operator): snapshots of blocks above the new head are no longer this chain's. */
  private readonly rollback = (height: number): void => {
    const removed = this.directory.removeAbove(height);
    if (removed.length > 0) this.opts.log?.('info', { height, removed }, 'state snapshots above a rollback removed');
  };
  /** Snapshots published, skipped (one still running) and failed since start (tests, metrics). */
  readonly stats = { taken: 0, skipped: 0, failed: 0, lastHeight: 0, lastMs: 0 };

  constructor(
    private readonly chain: Chain,
    private readonly db: KvStore,
    private readonly opts: SnapshotScheduleOptions,
  ) {
    this.directory = new SnapshotDirectory(join(opts.dataDir, SNAPSHOTS_DIR));
    const cleared = this.directory.clearUnfinished();
    if (cleared > 0) opts.log?.('info', { removed: cleared }, 'removed unfinished state snapshots');
    if (opts.interval > 0) chain.on('durable', this.listener);
    chain.on('rollback', this.rollback);
  }

  /** Resolves once no snapshot is being taken. */
  async idle(): Promise<void> {
    while (this.running !== null) await this.running;
  }

  /** Stop taking snapshots: the one running is aborted and awaited (before the database closes). */
  async stop(): Promise<void> {
    this.chain.off('durable', this.listener);
    this.chain.off('rollback', this.rollback);
    this.abort.aborted = true;
    await this.idle();
  }

  private onDurable(block: Block): void {
    if (block.index % this.opts.interval !== 0 || this.directory.has(block.index)) return;
    if (this.running !== null) {
      this.stats.skipped++;
      this.opts.log?.('warn', { height: block.index }, 'state snapshot skipped: the previous one is still being taken');
      return;
    }
    const t0 = performance.now();
    const height = block.index;
    const started = startSnapshot(
      this.db,
      { height, hash: block.hash, stateRoot: block.state_root },
      this.directory.root,
      this.abort,
      this.opts.limits,
    );
    this.running = started.then(
      (m) => {
        this.running = null;
        const ms = Math.round(performance.now() - t0);
        Object.assign(this.stats, { taken: this.stats.taken + 1, lastHeight: height, lastMs: ms });
        const removed = this.directory.prune(this.opts.keep);
        this.opts.log?.('info', { height, chunks: m.chunks.length, entries: m.entries, ms, removed }, 'state snapshot taken');
        return m;
      },
      (err: Error) => {
        this.running = null;
        if (this.abort.aborted) return null;
        this.stats.failed++;
        this.opts.log?.('warn', { height, err: err.message }, 'state snapshot failed');
        return null;
      },
    );
  }
}
