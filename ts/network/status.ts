/**
 * `P/status/1`, the handshake: one JSON frame each way, the requester's status first. Both frames are
 * bounded (MAX_STATUS_BYTES) and the exchange has one deadline, so a peer that opens it and stays silent
 * is not waited on (issue 29, finding 9).
 */
import type { Stream } from '@libp2p/interface';
import { lpStream } from '@libp2p/utils';
import { PeerMisbehaviour } from './errors.js';
import { readRequestFrame, sendFrame, varint } from './serving.js';

export interface ChainStatus {
  chain_id: number;
  genesis_hash: string;
  head_height: number;
  head_hash: string;
}

/** A status frame at most (the JSON of ChainStatus is ~200 bytes). */
export const MAX_STATUS_BYTES = 1024;

/** A status frame, checked (chain id, identity, head height and hash of the right types). */
export function parseStatus(frame: Uint8Array): ChainStatus {
  let s: Partial<ChainStatus>;
  try {
    s = JSON.parse(Buffer.from(frame).toString('utf8')) as Partial<ChainStatus>;
  } catch {
    throw new PeerMisbehaviour('status is not JSON');
  }
  if (
    typeof s !== 'object' ||
    s === null ||
    !Number.isSafeInteger(s.chain_id) ||
    typeof s.genesis_hash !== 'string' ||
    !Number.isSafeInteger(s.head_height) ||
    (s.head_height as number) < 0 ||
    typeof s.head_hash !== 'string'
  )
    throw new PeerMisbehaviour('malformed status');
  return s as ChainStatus;
}

/** Answer a status request on a stream: read the requester's status (returned), send ours. */
export async function answerStatus(stream: Stream, ours: () => ChainStatus): Promise<ChainStatus> {
  const theirs = parseStatus(await readRequestFrame(stream, MAX_STATUS_BYTES));
  await sendFrame(stream, Buffer.from(JSON.stringify(ours())));
  await stream.close();
  return theirs;
}

/** Send our status on an open stream and read the peer's, within `signal`. */
export async function exchangeStatus(stream: Stream, ours: ChainStatus, signal: AbortSignal): Promise<ChainStatus> {
  const lp = lpStream(stream, {
    maxDataLength: MAX_STATUS_BYTES,
    maxBufferSize: MAX_STATUS_BYTES + varint(MAX_STATUS_BYTES).length,
  });
  try {
    await lp.write(Buffer.from(JSON.stringify(ours)), { signal });
    const theirs = parseStatus((await lp.read({ signal })).subarray());
    await stream.close().catch(() => undefined);
    return theirs;
  } catch (err) {
    stream.abort(err instanceof Error ? err : new Error('status failed'));
    throw err;
  }
}
