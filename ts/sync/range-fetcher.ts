/**
 * Pipelined block-range download from one peer: the next range is requested as soon as the previous
 * one has arrived, while the importer works through what is queued, so the network round trip and the
 * peer's reads overlap with verification and execution here. The queue is bounded by bytes (the
 * download waits while it is full); blocks arrive in order and are handed out in order.
 */
import { MAX_BLOCKS_PER_REQUEST, MAX_RANGE_BYTES, PeerMisbehaviour, RangeInterrupted } from '../network/index.js';

/** What the fetcher needs of the network (P2PNetwork.streamBlocks). */
export interface RangeClient {
  streamBlocks(
    peer: string,
    req: { from: number; count: number; maxBytes?: number },
    onBlock: (frame: Uint8Array) => void,
    signal?: AbortSignal,
  ): Promise<{ blocks: number; bytes: number }>;
}

/** Encoded blocks queued ahead of the importer at most (a range may land on top of a nearly full queue). */
export const MAX_QUEUED_BYTES = 2 * MAX_RANGE_BYTES;

export interface FetchStats {
  ranges: number;
  blocks: number;
  bytes: number;
  /** Time from each request until its last block arrived, summed. */
  requestMs: number;
}

export class RangeFetcher {
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private failure: unknown = null;
  private done = false;
  private readonly abort = new AbortController();
  private wakeTaker: (() => void) | null = null;
  private wakeFetcher: (() => void) | null = null;
  private running: Promise<void> | null = null;
  readonly stats: FetchStats = { ranges: 0, blocks: 0, bytes: 0, requestMs: 0 };

  /**
   * from: the first height to fetch; target(): the highest height to fetch (read again before each
   * request, as the peer's head moves on).
   */
  private next: number;

  constructor(
    private readonly net: RangeClient,
    readonly peer: string,
    readonly from: number,
    private readonly target: () => number,
  ) {
    this.next = from;
  }

  /** Blocks queued, ready to take without waiting. */
  get queued(): number {
    return this.queue.length;
  }

  start(): void {
    this.running ??= this.run();
  }

  /** Stop downloading (an import failed, or the pass ended); what is queued is dropped. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('fetch stopped'));
    this.done = true;
    this.queue = [];
    this.wakeFetcher?.();
    await this.running;
  }

  /**
   * Queued blocks, in order: at least one (waiting for it), at most maxBlocks and, past the first,
   * maxBytes. Empty when the peer has no more; throws the download's failure once what arrived before
   * it was taken.
   */
  async take(maxBlocks: number, maxBytes: number): Promise<Uint8Array[]> {
    while (this.queue.length === 0 && !this.done) {
      await new Promise<void>((r) => {
        this.wakeTaker = r;
      });
    }
    if (this.queue.length === 0) {
      if (this.failure) throw this.failure;
      return [];
    }
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && n < maxBlocks && (n === 0 || bytes + this.queue[n].length <= maxBytes)) {
      bytes += this.queue[n].length;
      n++;
    }
    const out = this.queue.slice(0, n);
    this.queue = this.queue.slice(n);
    this.queuedBytes -= bytes;
    this.wakeFetcher?.();
    return out;
  }

  private push(frame: Uint8Array): void {
    if (this.abort.signal.aborted) return;
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    this.stats.blocks++;
    this.stats.bytes += frame.length;
    this.wakeTaker?.();
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        while (this.queuedBytes >= MAX_QUEUED_BYTES && !this.abort.signal.aborted) {
          await new Promise<void>((r) => {
            this.wakeFetcher = r;
          });
        }
        const last = this.target();
        if (this.abort.signal.aborted || this.next > last) break;
        const count = Math.min(MAX_BLOCKS_PER_REQUEST, last - this.next + 1);
        const t0 = performance.now();
        const reply = await this.net.streamBlocks(
          this.peer,
          { from: this.next, count, maxBytes: MAX_RANGE_BYTES },
          (f) => this.push(f),
          this.abort.signal,
        );
        this.stats.requestMs += performance.now() - t0;
        this.stats.ranges++;
        // A peer with none of the blocks it announced has nothing more for us now.
        if (reply.blocks === 0) break;
        this.next += reply.blocks;
      }
    } catch (err) {
      // Anything but a protocol violation (a dial that failed, a reset stream) ends the download like a
      // peer that went away: what arrived before is still handed out.
      if (!this.abort.signal.aborted)
        this.failure =
          err instanceof PeerMisbehaviour || err instanceof RangeInterrupted
            ? err
            : new RangeInterrupted(`range request failed: ${(err as Error).message}`, 0, err);
    } finally {
      this.done = true;
      this.wakeTaker?.();
    }
  }
}
