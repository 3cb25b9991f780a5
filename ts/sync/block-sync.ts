import { type Block, blockHeightOf, decodeBlock, encodeBlock } from '../chain/block.js';
import type { Chain } from '../chain/chain.js';
import { InvalidBlockError } from '../chain/validate-block.js';
import type { TxAdmission } from '../mempool/admission.js';
import type { Mempool } from '../mempool/mempool.js';
import { type ChainStatus, MAX_BLOCKS_PER_REQUEST, type P2PNetwork, PeerMisbehaviour } from '../network/p2p.js';

/** Blocks a node may trail the highest peer while following gossip, and still count as caught up. */
export const FOLLOW_LAG_BLOCKS = 2;
/** A head that has not moved for this long makes the node ask its peers for their heads again. */
export const STALL_REFRESH_MS = 3000;

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

  constructor(
    private readonly chain: Chain,
    private readonly mempool: Mempool,
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

  /** Highest head a peer has reported. */
  targetHeight(): number {
    let max = this.chain.height;
    for (const h of this.net.peerHeights().values()) max = Math.max(max, h);
    return max;
  }

  /** True while a peer is known to be ahead of this node (a proposer must not propose then). */
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

  /** Encoded blocks for a peer's range request. */
  async blocks(from: number, count: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    const to = Math.min(this.chain.height, from + Math.min(count, MAX_BLOCKS_PER_REQUEST) - 1);
    for (let h = from; h <= to; h++) {
      const b = await this.chain.blocks.getBlock(h);
      if (!b) break;
      out.push(encodeBlock(b));
    }
    return out;
  }

  /** A gossiped block: imported when it extends the head, else it tells us a peer is ahead. */
  async onGossipBlock(bytes: Uint8Array, from: string): Promise<void> {
    let b: Block;
    try {
      // A block this node already has (it decided it too) is not decoded whole.
      const height = blockHeightOf(bytes);
      if (height <= this.chain.height) {
        this.net.notePeerHeight(from, height);
        return;
      }
      b = decodeBlock(bytes);
    } catch (err) {
      throw new PeerMisbehaviour(`undecodable block: ${(err as Error).message}`);
    }
    this.net.notePeerHeight(from, b.index);
    if (b.index <= this.chain.height) return;
    if (b.index === this.chain.height + 1) {
      await this.importOne(b, from);
      return;
    }
    this.poke();
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

  /** Start a catch-up pass unless one is running. */
  poke(): void {
    if (this.stopped || this.running || !this.behind()) return;
    this.running = this.catchUp().finally(() => {
      this.running = null;
    });
  }

  private async catchUp(): Promise<void> {
    const t0 = performance.now();
    const start = this.chain.height;
    while (!this.stopped && this.behind()) {
      const [peer, height] = [...this.net.peerHeights()].sort((a, b) => b[1] - a[1])[0];
      const from = this.chain.height + 1;
      let frames: Uint8Array[];
      try {
        frames = await this.net.requestBlocks(peer, from, Math.min(MAX_BLOCKS_PER_REQUEST, height - this.chain.height));
      } catch (err) {
        this.log.debug({ peer, err: (err as Error).message }, 'block range request failed');
        this.net.peerHeights().delete(peer);
        return;
      }
      if (frames.length === 0) {
        this.net.peerHeights().set(peer, this.chain.height);
        return;
      }
      try {
        const blocks = frames.map((f) => {
          try {
            return decodeBlock(f);
          } catch (err) {
            throw new PeerMisbehaviour(`undecodable block: ${(err as Error).message}`);
          }
        });
        for (const b of blocks) await this.importOne(b, peer);
      } catch (err) {
        if (!(err instanceof PeerMisbehaviour)) throw err;
        await this.net.penalize(peer, 50, err.message);
        this.net.peerHeights().delete(peer);
        return;
      }
      this.logProgress(start, t0);
    }
  }

  private logProgress(start: number, t0: number): void {
    const now = performance.now();
    if (now - this.lastProgressLog < 3000 && this.behind()) return;
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
      },
      left > 0 ? 'syncing' : 'synced',
    );
  }
}
