import type { Stream } from '@libp2p/interface';
import { BLOCK_BY_HASH_TIMEOUT_MS, requestBlockOnStream } from './block-by-hash.js';
import { MAX_BLOCKS_PER_REQUEST, MAX_RANGE_BYTES, RANGE_TIMEOUT_MS, type RangeReply, readRange } from './block-range.js';
import { CONSENSUS_SYNC_TIMEOUT_MS, requestConsensusOnStream } from './consensus-sync.js';
import { SNAPSHOT_CHUNK_SERVING } from './serving-budget.js';
import { SNAPSHOT_CHUNK_TIMEOUT_MS, type SnapshotPartRequest, requestSnapshotPartOnStream } from './snapshot-chunk.js';
import { SNAPSHOTS_TIMEOUT_MS, type SnapshotOffer, requestSnapshotsOnStream } from './snapshots.js';

/** The request/response protocols of the chain, by the name in their protocol id (`<prefix>/<name>/1`). */
export type ProtocolName = 'status' | 'blocks' | 'block-by-hash' | 'consensus-sync' | 'snapshots' | 'snapshot-chunk';

/** Opens a stream of a protocol to a connected peer (the host's libp2p dial). */
export type OpenStream = (protocol: ProtocolName, signal: AbortSignal) => Promise<Stream>;

/**
 * The requesting side of the block-range, block-by-hash and consensus-sync protocols (the serving side
 * and the wire format of each live in its own file). The host hands over a way to open a stream to a
 * peer, or undefined when it is not connected to it.
 */
export class PeerRequests {
  /** Consensus-sync requests in flight per peer (an honest node never has two open to one peer). */
  private readonly consensusInFlight = new Map<string, Promise<Uint8Array[]>>();

  /** Snapshot-chunk requests open per peer, within the serving side's per-peer count. */
  private readonly snapshotTurns = new PerPeerTurns(SNAPSHOT_CHUNK_SERVING.responsesPerPeer);

  constructor(private readonly streamTo: (peer: string) => OpenStream | undefined) {}

  /**
   * Blocks [from, from + count) from a peer within maxBytes, each handed to onBlock as it arrives (the
   * peer may send fewer when it has fewer). Throws RangeInterrupted when the response ends early (the
   * blocks before were handed on), PeerMisbehaviour when it breaks the protocol.
   */
  async streamBlocks(
    peer: string,
    req: { from: number; count: number; maxBytes?: number },
    onBlock: (frame: Uint8Array) => void,
    signal?: AbortSignal,
  ): Promise<RangeReply> {
    const open = this.streamTo(peer);
    if (!open) throw new Error(`not connected to ${peer}`);
    const timeout = AbortSignal.timeout(RANGE_TIMEOUT_MS);
    const stream = await open('blocks', signal ? AbortSignal.any([signal, timeout]) : timeout);
    const count = Math.min(req.count, MAX_BLOCKS_PER_REQUEST);
    return readRange(
      stream,
      { from: req.from, count, maxBytes: Math.min(req.maxBytes ?? MAX_RANGE_BYTES, MAX_RANGE_BYTES) },
      onBlock,
      signal,
    );
  }

  /** Encoded blocks [from, from + count) from a peer (it may send fewer when it has fewer). */
  async requestBlocks(peer: string, from: number, count: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    await this.streamBlocks(peer, { from, count }, (b) => out.push(b));
    return out;
  }

  /** An encoded block by hash from a peer (up to 32 MiB), or null when it does not have it. */
  async requestBlockByHash(peer: string, hash: string): Promise<Uint8Array | null> {
    const open = this.streamTo(peer);
    if (!open) return null;
    const signal = AbortSignal.timeout(BLOCK_BY_HASH_TIMEOUT_MS);
    return requestBlockOnStream(await open('block-by-hash', signal), hash, signal);
  }

  /** The state snapshots a peer offers (state sync); throws PeerMisbehaviour on a malformed answer. */
  async requestSnapshots(peer: string): Promise<SnapshotOffer[]> {
    const open = this.streamTo(peer);
    if (!open) throw new Error(`not connected to ${peer}`);
    const signal = AbortSignal.timeout(SNAPSHOTS_TIMEOUT_MS);
    return requestSnapshotsOnStream(await open('snapshots', signal), signal);
  }

  /**
   * A snapshot's manifest or chunk from a peer (unverified bytes), or null when it does not hold it. At most
   * SNAPSHOT_CHUNK_SERVING.responsesPerPeer requests per peer are open at once (more would be abuse): callers
   * beyond wait their turn.
   */
  async requestSnapshotPart(peer: string, req: SnapshotPartRequest): Promise<Uint8Array | null> {
    const open = this.streamTo(peer);
    if (!open) throw new Error(`not connected to ${peer}`);
    const release = await this.snapshotTurns.acquire(peer);
    try {
      const signal = AbortSignal.timeout(SNAPSHOT_CHUNK_TIMEOUT_MS);
      return await requestSnapshotPartOnStream(await open('snapshot-chunk', signal), req, signal);
    } finally {
      release();
    }
  }

  /**
   * A peer's consensus messages for a height (encoded as on the consensus topic). One request per peer at
   * a time: a caller while one is in flight gets nothing (the stuck timer asks again a second later).
   */
  async requestConsensus(peer: string, height: number): Promise<Uint8Array[]> {
    const open = this.streamTo(peer);
    if (!open || this.consensusInFlight.has(peer)) return [];
    const run = (async () => {
      const stream = await open('consensus-sync', AbortSignal.timeout(CONSENSUS_SYNC_TIMEOUT_MS));
      return requestConsensusOnStream(stream, height);
    })();
    this.consensusInFlight.set(peer, run);
    try {
      return await run;
    } finally {
      this.consensusInFlight.delete(peer);
    }
  }
}

/** At most `limit` holders per peer at once; acquire() waits for a turn and resolves to its release. */
class PerPeerTurns {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  async acquire(peer: string): Promise<() => void> {
    while ((this.active.get(peer) ?? 0) >= this.limit) {
      await new Promise<void>((resolve) => {
        const q = this.waiting.get(peer) ?? [];
        q.push(resolve);
        this.waiting.set(peer, q);
      });
    }
    this.active.set(peer, (this.active.get(peer) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.active.get(peer) ?? 1) - 1;
      if (n === 0) this.active.delete(peer);
      else this.active.set(peer, n);
      const q = this.waiting.get(peer);
      const next = q?.shift();
      if (q?.length === 0) this.waiting.delete(peer);
      next?.();
    };
  }
}
