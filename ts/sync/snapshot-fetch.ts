/**
 * The chunk-fetching core of state sync (docs/p2p.md, "State sync"): a verified manifest's missing chunks are
 * fetched in parallel from every peer offering that snapshot (at most two requests per peer, the serving side's
 * per-peer count), each verified on arrival by the restorer. A chunk that does not verify costs its sender
 * INVALID_MESSAGE_PENALTY and the sender is dropped from this fetch; the chunk goes back to the queue for
 * another peer. A peer that does not hold a chunk, or fails to answer, is asked for other chunks (after
 * MAX_PEER_FAILURES failures it is dropped without blame). Progress is reported as chunks done/total, MB/s, ETA.
 */
import { INVALID_MESSAGE_PENALTY } from '../network/index.js';
import { SnapshotChunkError, type SnapshotRestorer } from '../snapshot/index.js';

/** Requests per peer at once (the serving side's per-peer count: more would be abuse). */
export const CHUNK_REQUESTS_PER_PEER = 2;
/** Failed requests (timeouts, closed streams) after which a peer is left out of this fetch, unblamed. */
export const MAX_PEER_FAILURES = 3;
/** Points for a chunk that does not verify (docs/p2p.md, "Request/response failures"). */
export const BAD_CHUNK_PENALTY = INVALID_MESSAGE_PENALTY;

export interface SnapshotFetchProgress {
  done: number;
  total: number;
  bytes: number;
  mbPerSec: number;
  /** Seconds left at the current rate (null before the first chunk). */
  etaSec: number | null;
}

export interface SnapshotFetchOptions {
  restorer: SnapshotRestorer;
  /** Peers offering this snapshot (same height and id). */
  peers: readonly string[];
  /** One chunk from a peer (the network's requestSnapshotPart): null when the peer does not hold it. */
  fetch: (peer: string, index: number) => Promise<Uint8Array | null>;
  /** Score a peer down (a chunk that does not verify). */
  penalize: (peer: string, points: number, reason: string) => void;
  onProgress?: (p: SnapshotFetchProgress) => void;
  signal?: AbortSignal;
}

/** No peer left that could serve the chunks still missing. */
export class SnapshotPeersExhaustedError extends Error {
  constructor(readonly missing: number[]) {
    super(`no peer left to serve ${missing.length} snapshot chunks (first: ${missing[0]})`);
    this.name = 'SnapshotPeersExhaustedError';
  }
}

interface PeerState {
  inFlight: number;
  failures: number;
  dropped: boolean;
  /** Penalized for a bad chunk (dropped too). */
  blamed: boolean;
  /** Chunks this peer answered it does not hold. */
  lacks: Set<number>;
}

/** Fetch and write every missing chunk of the restorer's snapshot; resolves when all are written. */
export async function fetchSnapshotChunks(opts: SnapshotFetchOptions): Promise<void> {
  const { restorer } = opts;
  const total = restorer.manifest.chunks.length;
  const queue = restorer.missing();
  const peers = new Map<string, PeerState>(
    opts.peers.map((p) => [p, { inFlight: 0, failures: 0, dropped: false, blamed: false, lacks: new Set() }]),
  );
  const running = new Set<Promise<void>>();
  const t0 = performance.now();
  let bytes = 0;
  let fatal: Error | null = null;

  const report = () => {
    if (!opts.onProgress) return;
    const secs = (performance.now() - t0) / 1000;
    const rate = secs > 0 ? bytes / secs : 0;
    const left = restorer.manifest.chunks.reduce((n, c, i) => n + (restorer.isDone(i) ? 0 : c.bytes), 0);
    opts.onProgress({
      done: restorer.chunksDone,
      total,
      bytes,
      mbPerSec: rate / 1e6,
      etaSec: rate > 0 ? left / rate : null,
    });
  };

  const attempt = async (peer: string, state: PeerState, index: number): Promise<void> => {
    let data: Uint8Array | null;
    try {
      data = await opts.fetch(peer, index);
    } catch {
      if (++state.failures >= MAX_PEER_FAILURES) state.dropped = true;
      queue.push(index);
      return;
    }
    if (data === null) {
      state.lacks.add(index);
      queue.push(index);
      return;
    }
    try {
      await restorer.addChunk(index, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      bytes += data.length;
      report();
    } catch (err) {
      if (err instanceof SnapshotChunkError) {
        // Once per fetch: a second bad chunk already in flight adds nothing (the peer is out already).
        if (!state.blamed) opts.penalize(peer, BAD_CHUNK_PENALTY, err.message);
        state.blamed = true;
        state.dropped = true;
        queue.push(index);
      } else fatal = err as Error;
    }
  };

  /** The next queued chunk this peer may be asked for (one it has not said it lacks). */
  const nextFor = (state: PeerState): number | undefined => {
    const i = queue.findIndex((c) => !state.lacks.has(c) && !restorer.isDone(c));
    return i < 0 ? undefined : queue.splice(i, 1)[0];
  };

  for (;;) {
    if (fatal) throw fatal;
    opts.signal?.throwIfAborted();
    // Chunks written meanwhile (a duplicate) leave the queue.
    for (let i = queue.length - 1; i >= 0; i--) if (restorer.isDone(queue[i])) queue.splice(i, 1);
    if (restorer.complete) break;
    for (const [peer, state] of peers) {
      while (!state.dropped && state.inFlight < CHUNK_REQUESTS_PER_PEER) {
        const index = nextFor(state);
        if (index === undefined) break;
        state.inFlight++;
        const task: Promise<void> = attempt(peer, state, index).finally(() => {
          state.inFlight--;
          running.delete(task);
        });
        running.add(task);
      }
    }
    if (running.size === 0) {
      const missing = restorer.missing();
      if (missing.length > 0) throw new SnapshotPeersExhaustedError(missing);
      break;
    }
    await Promise.race(running);
  }
  await Promise.all(running);
  if (fatal) throw fatal;
}
