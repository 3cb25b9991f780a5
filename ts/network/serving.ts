/**
 * What every request/response handler does before and around its answer: serve only peers that
 * completed the status handshake, admit the response under the protocol's budget, read the one request
 * frame bounded by the largest valid request of the protocol and within a deadline, and send with a
 * deadline on every wait for the peer to take data. Request abuse costs the peer points (docs/p2p.md,
 * "Request/response failures").
 */
import type { Stream } from '@libp2p/interface';
import { lpStream } from '@libp2p/utils';
import { INVALID_MESSAGE_PENALTY } from './errors.js';
import type { ServingBudget, ServingSlot } from './serving-budget.js';

/** A request stream must deliver its request frame within this (an honest requester writes it at once). */
export const REQUEST_READ_TIMEOUT_MS = 5_000;
/** A response whose peer takes no data for this long is abandoned (a slow reader holds budget). */
export const SEND_STALL_MS = 10_000;
/** Points for a request frame that did not arrive in time (light: a starved honest peer can be slow). */
export const REQUEST_TIMEOUT_PENALTY = 5;
/** Points for opening more concurrent requests of one protocol than an honest node ever does. */
export const REQUEST_FLOOD_PENALTY = 10;

/** A request that breaks the protocol; `penalty` points for the peer that sent it. */
export class RequestAbuse extends Error {
  constructor(
    message: string,
    readonly penalty = INVALID_MESSAGE_PENALTY,
  ) {
    super(message);
  }
}

/** What the handlers need of the host (P2PNetwork). */
export interface ServingHost {
  /** The peer completed the status handshake and is not refused. */
  mayServe(peer: string): boolean;
  penalize(peer: string, points: number, reason: string): Promise<void>;
  log: { debug: (o: object, m: string) => void };
}

/** Unsigned LEB128 (the varint of libp2p's length-prefixed frames). */
export function varint(n: number): Uint8Array {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Uint8Array.from(out);
}

const isTimeout = (err: unknown) => err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');

/**
 * The request frame of a stream: at most maxBytes (the read buffer is bounded too, so a peer streaming
 * megabytes at a 32-byte protocol is cut off after a few bytes, not after 4 MiB), within timeoutMs.
 */
export async function readRequestFrame(
  stream: Stream,
  maxBytes: number,
  timeoutMs = REQUEST_READ_TIMEOUT_MS,
): Promise<Uint8Array> {
  const lp = lpStream(stream, { maxDataLength: maxBytes, maxBufferSize: maxBytes + varint(maxBytes).length });
  try {
    return (await lp.read({ signal: AbortSignal.timeout(timeoutMs) })).subarray();
  } catch (err) {
    if (isTimeout(err)) throw new RequestAbuse(`no request within ${timeoutMs} ms`, REQUEST_TIMEOUT_PENALTY);
    const e = err as Error;
    if (/too long|overflow|length/i.test(e.message)) throw new RequestAbuse(`request frame over ${maxBytes} bytes`);
    throw err;
  }
}

/** Wait until a stream that refused more data (send() returned false) drains; fail when it closes or stalls. */
export function drained(stream: Stream, stallMs = SEND_STALL_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      stream.removeEventListener('drain', onDrain);
      stream.removeEventListener('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('stream closed while sending'));
    const timer = setTimeout(() => done(new Error(`the peer took no data for ${stallMs} ms`)), stallMs);
    stream.addEventListener('drain', onDrain, { once: true });
    stream.addEventListener('close', onClose, { once: true });
  });
}

/** Send bytes, waiting (with the stall deadline) while the stream's buffer is full. */
export async function send(stream: Stream, bytes: Uint8Array): Promise<void> {
  if (!stream.send(bytes)) await drained(stream);
}

/** Send one length-prefixed frame. */
export const sendFrame = (stream: Stream, frame: Uint8Array): Promise<void> =>
  send(stream, Buffer.concat([varint(frame.length), frame]));

/** Send a response's one frame, its bytes counted in flight until the connection took them. */
export async function sendCountedFrame(stream: Stream, frame: Uint8Array, slot: ServingSlot): Promise<void> {
  slot.hold(frame.length);
  await sendFrame(stream, frame);
  slot.sent(frame.length);
}

/**
 * The requesting side of a one-frame exchange: write the request, read the one response frame (at most
 * maxBytes, the read buffer bounded to match), close the stream.
 */
export async function requestOneFrame(
  stream: Stream,
  request: Uint8Array,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const lp = lpStream(stream, { maxDataLength: maxBytes, maxBufferSize: maxBytes + varint(maxBytes).length });
  await lp.write(request, { signal });
  const frame = (await lp.read({ signal })).subarray();
  await stream.close().catch(() => undefined);
  return frame;
}

/** Small frames are written in chunks of about this size (one Noise message, one Yamux frame each). */
const WRITE_CHUNK_BYTES = 60 * 1024;

/**
 * Send length-prefixed frames, then the empty end frame. Small frames (empty blocks are ~1 KB) go
 * together in chunks of WRITE_CHUNK_BYTES, so a thousand blocks are a few dozen encrypted messages
 * rather than a thousand; a large frame goes as its own message. The frames are pulled from the source
 * only while the response's bytes in flight are within the serving budget, and counted until sent.
 */
export async function sendFrames(
  stream: Stream,
  frames: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  slot: ServingSlot,
): Promise<void> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let held = 0;
  const flush = async () => {
    if (parts.length === 0) return;
    const chunk = parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    await send(stream, chunk);
    slot.sent(held);
    held = 0;
  };
  const iterator = (Symbol.asyncIterator in frames ? frames[Symbol.asyncIterator]() : frames[Symbol.iterator]()) as
    | AsyncIterator<Uint8Array>
    | Iterator<Uint8Array>;
  for (;;) {
    if (!(await slot.waitForBytes(SEND_STALL_MS))) {
      await iterator.return?.();
      throw new Error('serving budget exhausted');
    }
    const next = await iterator.next();
    if (next.done) break;
    const f = next.value;
    slot.hold(f.length);
    parts.push(varint(f.length));
    size += parts[parts.length - 1].length;
    if (f.length >= WRITE_CHUNK_BYTES) {
      await flush();
      await send(stream, f);
      slot.sent(f.length);
      continue;
    }
    held += f.length;
    parts.push(f);
    size += f.length;
    if (size >= WRITE_CHUNK_BYTES) await flush();
  }
  parts.push(varint(0));
  size += 1;
  await flush();
}

export interface RequestSpec {
  /** The protocol's name, for logs. */
  name: string;
  /** The largest valid request frame of the protocol. */
  maxRequestBytes: number;
  budget: ServingBudget;
}

/**
 * Answer one request stream: refuse peers that did not complete the handshake (or were refused), admit
 * the response under the budget, read the request and let `answer` respond. Any failure aborts the
 * stream; request abuse also costs the peer points.
 */
export async function serveRequest(
  host: ServingHost,
  stream: Stream,
  peer: string,
  spec: RequestSpec,
  answer: (request: Uint8Array, slot: ServingSlot) => Promise<void>,
): Promise<void> {
  if (!host.mayServe(peer)) {
    stream.abort(new Error('no completed status handshake'));
    return;
  }
  const slot = spec.budget.tryAcquire(peer);
  if (slot === 'peer' || slot === 'global') {
    stream.abort(new Error(slot === 'peer' ? 'too many concurrent requests' : 'busy'));
    if (slot === 'peer')
      await host.penalize(
        peer,
        REQUEST_FLOOD_PENALTY,
        `more than ${spec.budget.limits.responsesPerPeer} concurrent ${spec.name} requests`,
      );
    return;
  }
  try {
    const request = await readRequestFrame(stream, spec.maxRequestBytes);
    await answer(request, slot);
    await stream.close();
  } catch (err) {
    stream.abort(err instanceof Error ? err : new Error(String(err)));
    if (err instanceof RequestAbuse) await host.penalize(peer, err.penalty, `${spec.name} request: ${err.message}`);
    else host.log.debug({ peer, protocol: spec.name, err: (err as Error).message }, 'request not answered');
  } finally {
    slot.release();
  }
}
