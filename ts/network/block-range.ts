/**
 * The block-range protocol (`P/blocks/1`): a peer asks for blocks [from, from + count) and gets one
 * length-prefixed frame per block, then an empty frame. A response is bounded by blocks and by bytes
 * (the sender stops before a block would take it over the byte bound, but always sends at least one),
 * so a range of large blocks stays a few MiB in flight while a range of empty blocks holds a thousand.
 * The requester hands frames on as they arrive, so a syncing node can import the first blocks of a
 * range while the rest is still on the wire, and keeps what arrived when the peer goes away mid-range.
 */
import type { Stream } from '@libp2p/interface';
import { PeerMisbehaviour } from './errors.js';
import type { ServingBudget } from './serving-budget.js';
import { RequestAbuse, type ServingHost, sendFrames, serveRequest, varint } from './serving.js';

/** Blocks per range response at most (a request may ask for fewer). */
export const MAX_BLOCKS_PER_REQUEST = 1024;
/** Bytes of blocks per range response at most, unless its one block is larger (a block is at most MAX_FRAME_BYTES). */
export const MAX_RANGE_BYTES = 8 * 1024 * 1024;
/** One request/response frame (a block) at most. */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;
/** A range request's deadline for the stream to open, and for data to keep arriving. */
export const RANGE_TIMEOUT_MS = 30_000;
/**
 * A range request frame at most: the largest valid one, `{"from":<2^53-1>,"count":1024,"max_bytes":8388608}`,
 * is 61 bytes.
 */
export const MAX_RANGE_REQUEST_BYTES = 128;

export interface RangeRequest {
  from: number;
  count: number;
  /** Byte bound the requester wants (optional on the wire; the server's own bound applies too). */
  max_bytes?: number;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * A request frame, checked strictly: a JSON object whose `from` (≥ 0), `count` (≥ 1) and optional
 * `max_bytes` (≥ 1) are JSON integers — `null`, strings and fractions are refused (they are no request
 * an honest node sends). The count and byte bound are clamped to this node's. Throws RequestAbuse.
 */
export function parseRangeRequest(frame: Uint8Array): { from: number; count: number; maxBytes: number } {
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(frame).toString('utf8'));
  } catch {
    throw new RequestAbuse('range request is not JSON');
  }
  if (typeof req !== 'object' || req === null || Array.isArray(req)) throw new RequestAbuse('range request is not an object');
  const { from, count, max_bytes } = req as Record<string, unknown>;
  if (!isCount(from) || from < 0) throw new RequestAbuse('range request: from must be an integer >= 0');
  if (!isCount(count) || count < 1) throw new RequestAbuse('range request: count must be an integer >= 1');
  if (max_bytes !== undefined && (!isCount(max_bytes) || max_bytes < 1))
    throw new RequestAbuse('range request: max_bytes must be an integer >= 1');
  return {
    from,
    count: Math.min(MAX_BLOCKS_PER_REQUEST, count),
    maxBytes: Math.min(max_bytes ?? MAX_RANGE_BYTES, MAX_RANGE_BYTES),
  };
}

/**
 * Encoded blocks [from, from + count) within maxBytes (at least one when there is one), as far as the
 * node has them: a list, or a stream of blocks (an error in it ends the response early, as a broken
 * connection would).
 */
export type RangeSource = (
  from: number,
  count: number,
  maxBytes: number,
) => Promise<readonly Uint8Array[]> | AsyncIterable<Uint8Array>;

/** Answer one range request on a stream, within the serving budget (docs/p2p.md). */
export async function serveRange(
  host: ServingHost,
  stream: Stream,
  peer: string,
  source: RangeSource,
  budget: ServingBudget,
): Promise<void> {
  await serveRequest(
    host,
    stream,
    peer,
    { name: 'blocks', maxRequestBytes: MAX_RANGE_REQUEST_BYTES, budget },
    async (frame, slot) => {
      const { from, count, maxBytes } = parseRangeRequest(frame);
      const blocks = source(from, count, maxBytes);
      await sendFrames(stream, Symbol.asyncIterator in blocks ? blocks : await blocks, slot);
    },
  );
}

/**
 * A range request that ended before its empty end frame (the peer went away, timed out or broke the
 * protocol): `received` blocks arrived before that and were handed on.
 */
export class RangeInterrupted extends Error {
  constructor(
    message: string,
    readonly received: number,
    readonly reason?: unknown,
  ) {
    super(message);
  }
}

export interface RangeReply {
  /** Blocks received (each handed to onBlock as it arrived). */
  blocks: number;
  bytes: number;
}

/**
 * Length-prefixed frames out of a stream's chunks, as they arrive (a frame may span many chunks, a
 * chunk may hold many frames). Returns the frames completed by a chunk; `ended` once the empty frame came.
 */
class FrameParser {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private need = -1;
  ended = false;

  constructor(private readonly maxFrame: number) {}

  push(chunk: Uint8Array, onFrame: (frame: Uint8Array) => void): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.ended) {
      if (this.need < 0 && !this.readLength()) return;
      if (this.buffered < this.need) return;
      const frame = this.take(this.need);
      this.need = -1;
      onFrame(frame);
    }
  }

  /** The next frame's length prefix, when it has arrived whole (false: wait for more). */
  private readLength(): boolean {
    let n = 0;
    let mul = 1;
    let i = 0;
    for (const c of this.chunks) {
      for (let j = 0; j < c.length; j++) {
        const b = c[j];
        n += (b & 0x7f) * mul;
        i++;
        if (b < 0x80) {
          this.take(i);
          if (n > this.maxFrame) throw new PeerMisbehaviour(`a frame of ${n} bytes, at most ${this.maxFrame}`);
          if (n === 0) this.ended = true;
          this.need = n;
          return true;
        }
        mul *= 0x80;
        if (i >= 5) throw new PeerMisbehaviour('malformed frame length');
      }
    }
    return false;
  }

  /** The next n buffered bytes (a view when they lie in one chunk). */
  private take(n: number): Uint8Array {
    this.buffered -= n;
    const first = this.chunks[0];
    if (first && first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = this.chunks[0];
      const k = Math.min(c.length, n - at);
      out.set(c.subarray(0, k), at);
      at += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }
}

/**
 * Read a range response from an open stream: write the request, then hand each block frame to onBlock
 * in order as it arrives. A response over the count, or over the byte bound with more than one block,
 * is the peer's misbehaviour (PeerMisbehaviour); a stream that ends early, or sends nothing for
 * RANGE_TIMEOUT_MS, throws RangeInterrupted.
 */
export function readRange(
  stream: Stream,
  req: { from: number; count: number; maxBytes: number },
  onBlock: (frame: Uint8Array) => void,
  signal?: AbortSignal,
): Promise<RangeReply> {
  const request = Buffer.from(
    JSON.stringify({ from: req.from, count: req.count, max_bytes: req.maxBytes } satisfies RangeRequest),
  );
  const parser = new FrameParser(MAX_FRAME_BYTES);
  let blocks = 0;
  let bytes = 0;
  return new Promise<RangeReply>((resolve, reject) => {
    let timer: NodeJS.Timeout | null = null;
    const done = (err?: Error) => {
      if (timer) clearTimeout(timer);
      stream.removeEventListener('message', onMessage);
      stream.removeEventListener('close', onClose);
      stream.removeEventListener('remoteCloseWrite', onEof);
      signal?.removeEventListener('abort', onAbort);
      if (!err) {
        resolve({ blocks, bytes });
        void stream.close().catch(() => undefined);
        return;
      }
      stream.abort(err);
      reject(
        err instanceof PeerMisbehaviour
          ? err
          : new RangeInterrupted(`range response ended after ${blocks} blocks: ${err.message}`, blocks, err),
      );
    };
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => done(new Error(`nothing received for ${RANGE_TIMEOUT_MS} ms`)), RANGE_TIMEOUT_MS);
    };
    const onFrame = (frame: Uint8Array) => {
      if (frame.length === 0) return;
      blocks++;
      bytes += frame.length;
      if (blocks > req.count) throw new PeerMisbehaviour(`${blocks} blocks in a response to a request for ${req.count}`);
      if (blocks > 1 && bytes > req.maxBytes) throw new PeerMisbehaviour(`range response over ${req.maxBytes} bytes`);
      onBlock(frame);
    };
    const onMessage = (evt: { data: Uint8Array | { subarray(): Uint8Array } }) => {
      if (parser.ended) return;
      arm();
      try {
        parser.push(evt.data instanceof Uint8Array ? evt.data : evt.data.subarray(), onFrame);
      } catch (err) {
        done(err as Error);
        return;
      }
      if (parser.ended) done();
    };
    const onClose = (evt: Event) => done((evt as Event & { error?: Error }).error ?? new Error('stream closed'));
    const onEof = () => {
      if (!parser.ended) done(new Error('the peer closed the stream before the end frame'));
    };
    const onAbort = () => done(new Error('aborted'));
    if (signal?.aborted) return done(new Error('aborted'));
    stream.addEventListener('message', onMessage);
    stream.addEventListener('close', onClose);
    stream.addEventListener('remoteCloseWrite', onEof);
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
    stream.send(Buffer.concat([varint(request.length), request]));
  });
}
