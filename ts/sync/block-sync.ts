import {
  type Block,
  blockHeightOf,
  decodeBlock,
  type Chain,
  InvalidBlockError,
  forgetVerifiedAhead,
  type VerifiedAhead,
} from '../chain/index.js';
import type { TxAdmission, Mempool } from '../mempool/index.js';
import type { BlockTxPool } from '../mempool/interface.js';
import {
  type ChainStatus,
  MAX_BLOCKS_PER_REQUEST,
  type P2PNetwork,
  PeerMisbehaviour,
  RangeInterrupted,
  IgnoredMessage,
  MAX_RANGE_BYTES,
} from '../network/index.js';
import { RangeFetcher } from './range-fetcher.js';
import { type SyncPhases, addFetchStats, emptyPhases, roundPhases } from './sync-phases.js';
import { ProvenHeads, proveHead } from './proven-heads.js';

/**
 * Blocks (and bytes of them) whose signatures are verified in one batch before they are imported: a few
 * thousand signatures (hundreds of empty blocks, two blocks of a thousand transfers), small enough that
 * the first batch's verification, which nothing overlaps, is short, and the next one's overlaps an import.
 */
const VERIFY_BATCH_BLOCKS = 512;
/** Most blocks and transactions committed in one write during catch-up (Chain.importRun). */
const RUN_BLOCKS = 128;
const RUN_TXS = 8_000;

/** A verified batch cut into runs of at most RUN_BLOCKS blocks and about RUN_TXS transactions (one block at least). */
function commitRuns(blocks: readonly Block[]): Block[][] {
  const runs: Block[][] = [];
  let run: Block[] = [];
  let txs = 0;
  for (const b of blocks) {
    if (run.length > 0 && (run.length >= RUN_BLOCKS || txs + b.tx_count > RUN_TXS)) {
      runs.push(run);
      run = [];
      txs = 0;
    }
    run.push(b);
    txs += b.tx_count;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
const VERIFY_BATCH_BYTES = 512 * 1024;

/** Blocks a node may trail the highest peer while following gossip, and still count as caught up. */
export const FOLLOW_LAG_BLOCKS = 2;
/** A head that has not moved for this long makes the node ask its peers for their heads again. */
export const STALL_REFRESH_MS = 3000;
/** A probe of a peer's claimed head (one block) must be answered within this. */
export const PROBE_TIMEOUT_MS = 10_000;
/** A peer whose claim could not be checked (timeout, busy, unknown signers) is not probed again for this long. */
export const PROBE_COOLDOWN_MS = 10_000;
/** Probes of claimed heads running at once at most. */
export const MAX_PROBES = 4;
/** Points for claiming a head and then not serving it (or serving another block): a lie about the chain. */
export const FALSE_HEAD_PENALTY = 50;

export interface SyncLog {
  info: (o: object, m: string) => void;
  warn: (o: object, m: string) => void;
  debug: (o: object, m: string) => void;
}

/**
 * Follows the network: imports gossiped blocks at the head, and fills gaps (a late start, a restart
 * after a crash, a full node starting from zero) by asking the peer with the highest head for block
 * ranges. Every block goes through Chain.importBlock — the same block-validity rule as production —
 * so a bad block is rejected whole, its sender scored down, and nothing of it persists.
 */
export class BlockSync {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastProgressLog = 0;
  private stopped = false;
  private lastHeight = -1;
  private lastHeightAt = Date.now();
  private lastRefreshAt = 0;
  /** Blocks imported from peers (gossip and ranges). */
  imported = 0;
  /** Where the last catch-up pass spent its time (logged with its progress lines). */
  phases: SyncPhases = emptyPhases();
  private passCpu = process.cpuUsage();
  /** Heights peers proved (their claims are hints until then). */
  readonly heads = new ProvenHeads();
  private readonly probing = new Set<string>();
  private readonly probeCooldown = new Map<string, number>();
  /** This node's height when the current catch-up began (eth_syncing's startingBlock). */
  private syncStartedAt = 0;

  constructor(
    private readonly chain: Chain,
    private readonly mempool: BlockTxPool,
    private readonly admission: TxAdmission,
    private readonly net: P2PNetwork,
    private readonly log: SyncLog,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), 1000);
    this.timer.unref();
  }

  /**
   * Once a second: catch up when a peer is known to be ahead. While the head has not moved for
   * STALL_REFRESH_MS, ask the peers for their heads again (at most that often): a block announcement is
   * gossiped once, and a node that missed it (or a validator that missed a height's last votes) would
   * otherwise wait for the next announcement, which a network waiting for this node's vote never makes.
   */
  private tick(): void {
    if (this.stopped) return;
    const now = Date.now();
    if (this.chain.height !== this.lastHeight) {
      this.lastHeight = this.chain.height;
      this.lastHeightAt = now;
    }
    if (!this.running && now - this.lastHeightAt > STALL_REFRESH_MS && now - this.lastRefreshAt > STALL_REFRESH_MS) {
      this.lastRefreshAt = now;
      void this.net.refreshPeerStatus().then(() => this.poke());
    }
    this.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** This node's status for the handshake. */
  status(): ChainStatus {
    return {
      chain_id: this.chain.params.chainId,
      genesis_hash: this.genesisHash,
      head_height: this.chain.height,
      head_hash: this.chain.head.hash,
    };
  }

  genesisHash = '';

  /**
   * The highest head a connected peer has proven (ts/sync/proven-heads.ts), or null when none has: what
   * readiness compares this node's head with. Unproven claims never count.
   */
  bestProvenPeerHeight(): number | null {
    for (const [peer, h] of this.heads.ranked()) if (this.net.isHandshaken(peer)) return h;
    return null;
  }

  /** The head to catch up to: the highest proven peer head, or this node's own. */
  targetHeight(): number {
    return Math.max(this.chain.height, this.bestProvenPeerHeight() ?? -1);
  }

  /**
   * One answer for `sync_info` and `eth_syncing`: null while caught up, else where the catch-up started,
   * where this node is and the proven target.
   */
  syncing(): { starting: number; current: number; highest: number } | null {
    if (!this.catchingUp()) return null;
    return {
      starting: Math.min(this.syncStartedAt, this.chain.height),
      current: this.chain.height,
      highest: this.targetHeight(),
    };
  }

  /** True while a peer is proven to be ahead of this node (a proposer must not propose then). */
  behind(): boolean {
    return this.targetHeight() > this.chain.height;
  }

  /**
   * Catching up (`sync_info.catching_up`): more than FOLLOW_LAG_BLOCKS behind the highest peer.
   * Following the head by gossip, a block behind for a moment while the newest one travels, is not
   * catching up.
   */
  catchingUp(): boolean {
    return this.targetHeight() - this.chain.height > FOLLOW_LAG_BLOCKS;
  }

  /** Encoded blocks for a peer's range request (the stored bytes, as they are), streamed from storage. */
  blocks(from: number, count: number, maxBytes: number): AsyncIterable<Uint8Array> {
    return this.chain.blocks.streamEncodedBlocks(from, Math.min(count, MAX_BLOCKS_PER_REQUEST), maxBytes);
  }

  /**
   * A gossiped block: imported when it extends the head. A block more than one height above the head
   * cannot be judged here (its parent is missing): it is IGNOREd — not relayed, the sender not blamed —
   * and its height is only a hint, probed before it counts.
   */
  async onGossipBlock(bytes: Uint8Array, from: string): Promise<void> {
    let b: Block;
    let height: number;
    try {
      // A block this node already has (it decided it too) is not decoded whole.
      height = blockHeightOf(bytes);
      if (height <= this.chain.height) {
        this.net.notePeerHeight(from, height);
        return;
      }
      if (height > this.chain.height + 1) {
        this.net.notePeerHeight(from, height);
        this.poke();
        throw new IgnoredMessage(`block ${height} is more than one height above the head ${this.chain.height}`);
      }
      b = decodeBlock(bytes);
    } catch (err) {
      if (err instanceof IgnoredMessage) throw err;
      throw new PeerMisbehaviour(`undecodable block: ${(err as Error).message}`);
    }
    if (b.index <= this.chain.height) return;
    if (await this.importOne(b, from)) {
      this.net.notePeerHeight(from, b.index);
      this.heads.note(from, b.index);
    }
  }

  /**
   * Check peers' claims ahead of this node: ask each claimant for the block at its claimed head and prove
   * it (proveHead). A claim it does not serve, or serves with another block, is a lie: the peer is
   * penalized and the claim dropped. One that cannot be checked now is dropped without blame for a while.
   */
  private probeClaims(): void {
    const now = Date.now();
    const claims = [...this.net.peerHeights()]
      .filter(
        ([peer, h]) =>
          h > Math.max(this.chain.height, this.heads.get(peer)) &&
          !this.probing.has(peer) &&
          (this.probeCooldown.get(peer) ?? 0) <= now,
      )
      .sort((a, b) => b[1] - a[1]);
    for (const [peer, claim] of claims) {
      if (this.probing.size >= MAX_PROBES) return;
      this.probing.add(peer);
      void this.probe(peer, claim).finally(() => this.probing.delete(peer));
    }
  }

  private async probe(peer: string, claim: number): Promise<void> {
    const frames: Uint8Array[] = [];
    const drop = (cooldown: boolean) => {
      if ((this.net.peerHeights().get(peer) ?? -1) <= claim)
        this.net.peerHeights().set(peer, Math.max(this.heads.get(peer), this.chain.height));
      if (cooldown) this.probeCooldown.set(peer, Date.now() + PROBE_COOLDOWN_MS);
    };
    try {
      await this.net.streamBlocks(
        peer,
        { from: claim, count: 1, maxBytes: MAX_RANGE_BYTES },
        (f) => frames.push(f),
        AbortSignal.timeout(PROBE_TIMEOUT_MS),
      );
    } catch (err) {
      drop(true);
      if (err instanceof PeerMisbehaviour) await this.net.penalize(peer, err.penalty, err.message);
      else this.log.debug({ peer, claim, err: (err as Error).message }, 'claimed head not checked');
      return;
    }
    const proof =
      frames.length === 0 ? ({ kind: 'false', reason: 'it served nothing' } as const) : proveHead(this.chain, frames[0], claim);
    if (proof.kind === 'proven') {
      this.heads.note(peer, claim);
      this.poke();
      return;
    }
    drop(proof.kind === 'unproven');
    if (proof.kind === 'false') await this.net.penalize(peer, FALSE_HEAD_PENALTY, `claimed head ${claim}: ${proof.reason}`);
    else this.log.info({ peer, claim, reason: proof.reason }, 'claimed head not proven');
  }

  private async importOne(b: Block, from: string): Promise<boolean> {
    if (b.index !== this.chain.height + 1) return b.index <= this.chain.height;
    try {
      await this.chain.importBlock(b);
    } catch (err) {
      if (err instanceof InvalidBlockError) {
        // A block for a height we already filled (a race with a range import) is not misbehaviour.
        if (err.rule === 'height' || err.rule === 'parent_hash') return false;
        throw new PeerMisbehaviour(err.message);
      }
      throw err;
    }
    this.imported++;
    this.mempool.onBlock(b.transactions, []);
    this.admission.onBlock();
    this.log.debug({ height: b.index, txs: b.tx_count, from }, 'block imported');
    return true;
  }

  /**
   * Consecutive blocks of a range committed in one atomic write (Chain.importRun), each through the one
   * validity rule; the first invalid one is the peer's misbehaviour, the blocks before it stay imported.
   */
  private async importRun(run: Block[], from: string): Promise<boolean> {
    const fresh = run.filter((b) => b.index > this.chain.height);
    if (fresh.length === 0 || fresh[0].index !== this.chain.height + 1) return false;
    const before = this.chain.height;
    let failure: unknown = null;
    try {
      await this.chain.importRun(fresh);
    } catch (err) {
      failure = err;
    }
    const imported = fresh.filter((b) => b.index <= this.chain.height);
    for (const b of imported) this.mempool.onBlock(b.transactions, []);
    if (imported.length > 0) this.admission.onBlock();
    this.imported += imported.length;
    if (imported.length > 0) this.log.debug({ from: imported[0].index, to: this.chain.height, peer: from }, 'blocks imported');
    if (failure instanceof InvalidBlockError) {
      // A block for a height we already filled (a race with a gossiped block) is not misbehaviour.
      if (failure.rule !== 'height' && failure.rule !== 'parent_hash') throw new PeerMisbehaviour(failure.message);
    } else if (failure) throw failure;
    return this.chain.height > before;
  }

  /** Check new claims, and start a catch-up pass unless one is running. */
  poke(): void {
    if (this.stopped) return;
    this.probeClaims();
    if (this.running || !this.behind()) return;
    this.syncStartedAt = this.chain.height;
    this.running = this.catchUp().finally(() => {
      this.running = null;
    });
  }

  /**
   * Catch up from the peer with the highest head: ranges stream in (the next requested while this
   * node imports the current one), and each batch of queued blocks has its signatures verified in one
   * parallel native call before the blocks are imported one by one through Chain.importBlock.
   */
  private async catchUp(): Promise<void> {
    const t0 = performance.now();
    const start = this.chain.height;
    const phases = emptyPhases();
    this.phases = phases;
    this.passCpu = process.cpuUsage();
    while (!this.stopped && this.behind()) {
      // Only a peer that proved its head is a sync source; past that head it is asked for what it claims.
      const source = this.heads.ranked().find(([p, h]) => h > this.chain.height && this.net.isHandshaken(p));
      if (!source) return;
      const peer = source[0];
      const target = () => Math.max(this.heads.get(peer), this.net.peerHeights().get(peer) ?? -1);
      const fetcher = new RangeFetcher(this.net, peer, this.chain.height + 1, target);
      fetcher.start();
      try {
        const progressed = await this.importFrom(fetcher, phases, start, t0);
        if (!progressed) {
          this.heads.drop(peer);
          this.net.peerHeights().set(peer, this.chain.height);
        }
      } catch (err) {
        if (err instanceof PeerMisbehaviour) {
          await this.net.penalize(peer, err.penalty, err.message);
        } else if (!(err instanceof RangeInterrupted)) {
          // Not the peer's doing (the import itself failed): end the pass; the next tick starts another.
          this.log.warn({ peer, err: (err as Error).message }, 'catch-up pass failed');
          return;
        }
        // The blocks it sent before are imported; the pass goes on from the next best peer, if one is ahead.
        this.log.debug({ peer, err: (err as Error).message }, 'block range from peer failed');
        this.net.peerHeights().delete(peer);
        this.heads.drop(peer);
        continue;
      } finally {
        await fetcher.stop();
        addFetchStats(phases, fetcher.stats);
        forgetVerifiedAhead();
      }
      this.logProgress(start, t0, true);
    }
  }

  /**
   * Import what the fetcher delivers until it has no more. Returns whether any block was imported.
   * While a batch is imported, the next queued batch's signatures are already being verified on the
   * verification thread, so verification and import overlap on the two cores.
   */
  private async importFrom(fetcher: RangeFetcher, phases: SyncPhases, start: number, t0: number): Promise<boolean> {
    let progressed = false;
    let expected = fetcher.from;
    /** The next batch, decoded and in verification; null at the end (or when wait is false and nothing is queued). */
    const nextBatch = async (wait: boolean): Promise<{ blocks: Block[]; verified: Promise<VerifiedAhead> } | null> => {
      if (!wait && fetcher.queued === 0) return null;
      let t = performance.now();
      const frames = await fetcher.take(VERIFY_BATCH_BLOCKS, VERIFY_BATCH_BYTES);
      phases.wait_ms += performance.now() - t;
      if (frames.length === 0 || this.stopped) return null;
      t = performance.now();
      const blocks = frames.map((f) => {
        try {
          return decodeBlock(f);
        } catch (err) {
          throw new PeerMisbehaviour(`undecodable block: ${(err as Error).message}`);
        }
      });
      for (const b of blocks) {
        if (b.index !== expected++)
          throw new PeerMisbehaviour(`range response holds block ${b.index} where ${expected - 1} belongs`);
      }
      phases.decode_ms += performance.now() - t;
      t = performance.now();
      const verified = this.chain.verifyAhead(blocks);
      verified.catch(() => undefined);
      phases.verify_ms += performance.now() - t;
      return { blocks, verified };
    };
    let batch = await nextBatch(true);
    while (batch) {
      let t = performance.now();
      phases.signatures += (await batch.verified).checked;
      phases.verify_wait_ms += performance.now() - t;
      const following = await nextBatch(false);
      const chain = { ...this.chain.importTimings };
      t = performance.now();
      for (const run of commitRuns(batch.blocks)) {
        if (await this.importRun(run, fetcher.peer)) {
          progressed = true;
          this.heads.note(fetcher.peer, this.chain.height);
        }
        phases.blocks += run.length;
        for (const b of run) phases.txs += b.tx_count;
      }
      phases.import_ms += performance.now() - t;
      phases.validate_ms += this.chain.importTimings.validate_ms - chain.validate_ms;
      phases.write_ms += this.chain.importTimings.write_ms - chain.write_ms;
      phases.listeners_ms += this.chain.importTimings.listeners_ms - chain.listeners_ms;
      this.logProgress(start, t0);
      batch = following ?? (await nextBatch(true));
    }
    return progressed;
  }

  private logProgress(start: number, t0: number, passEnd = false): void {
    const now = performance.now();
    if (now - this.lastProgressLog < 3000 && !(passEnd && !this.behind())) return;
    const cpu = process.cpuUsage(this.passCpu);
    this.phases.cpu_ms = (cpu.user + cpu.system) / 1000;
    this.lastProgressLog = now;
    const done = this.chain.height - start;
    const rate = done / Math.max(0.001, (now - t0) / 1000);
    const left = this.targetHeight() - this.chain.height;
    this.log.info(
      {
        height: this.chain.height,
        target: this.targetHeight(),
        blocks_per_s: Math.round(rate),
        eta_s: Math.round(left / Math.max(rate, 1)),
        imported: done,
        elapsed_ms: Math.round(now - t0),
        phases: roundPhases(this.phases),
      },
      left > 0 ? 'syncing' : 'synced',
    );
  }
}
