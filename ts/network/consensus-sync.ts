/**
 * `P/consensus-sync/1`: the proposals and votes a peer holds for one height, for a validator that
 * restarted or was cut off (docs/p2p.md, "Catching up with a round"). Request `{"height":N}`; response
 * one frame per message, then an empty frame.
 */
import type { Stream } from '@libp2p/interface';
import { lpStream } from '@libp2p/utils';
import { MAX_FRAME_BYTES } from './block-range.js';
import { PeerMisbehaviour } from './errors.js';
import type { ServingBudget } from './serving-budget.js';
import { RequestAbuse, type ServingHost, sendFrames, serveRequest, varint } from './serving.js';

/** Consensus messages in one response at most (proposals and votes of one height). */
export const MAX_CONSENSUS_MESSAGES = 1000;
/** The largest valid request, `{"height":9007199254740991}`, is 28 bytes. */
export const CONSENSUS_REQUEST_BYTES = 64;
/** Deadline for the stream to open and for each response frame. */
export const CONSENSUS_SYNC_TIMEOUT_MS = 10_000;

/** `{"height": N}` with N a JSON integer ≥ 1, or RequestAbuse. */
export function parseConsensusRequest(frame: Uint8Array): number {
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(frame).toString('utf8'));
  } catch {
    throw new RequestAbuse('consensus request is not JSON');
  }
  const height = (req as { height?: unknown } | null)?.height;
  if (typeof height !== 'number' || !Number.isSafeInteger(height) || height < 1)
    throw new RequestAbuse('consensus request: height must be an integer >= 1');
  return height;
}

export async function serveConsensusSync(
  host: ServingHost,
  stream: Stream,
  peer: string,
  budget: ServingBudget,
  messagesAt: (height: number) => Uint8Array[],
): Promise<void> {
  const spec = { name: 'consensus-sync', maxRequestBytes: CONSENSUS_REQUEST_BYTES, budget };
  await serveRequest(host, stream, peer, spec, async (request, slot) => {
    const height = parseConsensusRequest(request);
    await sendFrames(stream, messagesAt(height).slice(0, MAX_CONSENSUS_MESSAGES), slot);
  });
}

/** Read a consensus-sync response from an open stream (the request is written first). */
export async function requestConsensusOnStream(stream: Stream, height: number): Promise<Uint8Array[]> {
  const lp = lpStream(stream, {
    maxDataLength: MAX_FRAME_BYTES,
    maxBufferSize: MAX_FRAME_BYTES + varint(MAX_FRAME_BYTES).length,
  });
  await lp.write(Buffer.from(JSON.stringify({ height })));
  const out: Uint8Array[] = [];
  for (;;) {
    const frame = (await lp.read({ signal: AbortSignal.timeout(CONSENSUS_SYNC_TIMEOUT_MS) })).subarray();
    if (frame.length === 0) break;
    out.push(frame);
    if (out.length > MAX_CONSENSUS_MESSAGES) throw new PeerMisbehaviour('too many consensus messages in a response');
  }
  await stream.close().catch(() => undefined);
  return out;
}
