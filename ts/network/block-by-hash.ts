/**
 * `P/block-by-hash/1`: one block by its hash (a proposal's block sent by reference, the locked or valid
 * block of a restarted validator, or a committed one). The request is the 32-byte hash and nothing else;
 * the response one frame, the block encoding (up to MAX_FRAME_BYTES, 32 MiB) or empty.
 */
import type { Stream } from '@libp2p/interface';
import { lpStream } from '@libp2p/utils';
import { MAX_FRAME_BYTES } from './block-range.js';
import type { ServingBudget } from './serving-budget.js';
import { RequestAbuse, type ServingHost, sendFrame, serveRequest, varint } from './serving.js';

/** The request: a block hash. */
export const BLOCK_HASH_REQUEST_BYTES = 32;
/** The whole exchange at most (a 32 MiB block at a few MB/s). */
export const BLOCK_BY_HASH_TIMEOUT_MS = 30_000;

/** Answer one block-by-hash request (`lookup` returns the encoding, or null when this node lacks it). */
export async function serveBlockByHash(
  host: ServingHost,
  stream: Stream,
  peer: string,
  budget: ServingBudget,
  lookup: (hash: string) => Promise<Uint8Array | null>,
): Promise<void> {
  const spec = { name: 'block-by-hash', maxRequestBytes: BLOCK_HASH_REQUEST_BYTES, budget };
  await serveRequest(host, stream, peer, spec, async (request, slot) => {
    if (request.length !== BLOCK_HASH_REQUEST_BYTES) throw new RequestAbuse('a block hash is 32 bytes');
    const block = (await lookup(Buffer.from(request).toString('hex'))) ?? new Uint8Array(0);
    slot.hold(block.length);
    await sendFrame(stream, block);
    slot.sent(block.length);
  });
}

/**
 * Ask an open stream for a block: the encoding, or null when the peer does not have it. The read buffer
 * is sized for the largest block (libp2p's default stops at 4 MiB, which made blocks above it unfetchable).
 */
export async function requestBlockOnStream(stream: Stream, hash: string, signal: AbortSignal): Promise<Uint8Array | null> {
  const lp = lpStream(stream, {
    maxDataLength: MAX_FRAME_BYTES,
    maxBufferSize: MAX_FRAME_BYTES + varint(MAX_FRAME_BYTES).length,
  });
  await lp.write(Buffer.from(hash, 'hex'), { signal });
  const frame = (await lp.read({ signal })).subarray();
  await stream.close().catch(() => undefined);
  return frame.length ? frame : null;
}
