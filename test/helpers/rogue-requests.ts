/**
 * Adversarial request/response peers for the network tests: a raw libp2p host on the node's stack (TCP,
 * Noise, Yamux, identify, gossipsub; a fresh key) that speaks the chain's protocol ids directly instead of
 * through P2PNetwork, so it can skip or fake the status handshake, open request streams and leave them
 * silent or half-written, read responses slowly, and gossip without having been accepted as a peer.
 */
// The network door loads the Promise.withResolvers polyfill (p2p.ts) before any libp2p module below.
import '../../ts/network/index.js';
import { randomBytes } from 'node:crypto';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { StrictNoSign, gossipsub } from '@libp2p/gossipsub';
import { identify } from '@libp2p/identify';
import type { Libp2p, Stream } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { lpStream } from '@libp2p/utils';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { pino } from 'pino';
import { blockHeightOf } from '../../ts/chain/index.js';
import { P2PNetwork, varint } from '../../ts/network/index.js';

export interface RawPeer {
  node: Libp2p;
  peerId: string;
  /** The chain's protocol id for `name` (`status`, `blocks`, `block-by-hash`, `consensus-sync`). */
  protocol(name: string): string;
  /** Open a stream of a protocol to the target (nothing written yet). */
  open(name: string): Promise<Stream>;
  /** Publish raw bytes on a gossip topic of the chain (`txs`, `block`, `consensus`, `evidence`). */
  publish(topic: string, data: Uint8Array): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A raw peer of a chain (`chainId`, network identity `genesisHash`) connected to `target` (a multiaddr
 * with /p2p/<id>). `status`: how it answers the target's status request — `silent` opens nothing back
 * (the handshake never completes), `none` does not even register the protocol (the target refuses it as
 * another chain). It never asks the target for its status itself.
 */
export async function startRawPeer(o: {
  chainId: number;
  genesisHash: string;
  target: string;
  status: 'silent' | 'none';
}): Promise<RawPeer> {
  const prefix = `/native/${o.chainId}/${o.genesisHash.slice(0, 16)}`;
  const node = await createLibp2p({
    privateKey: privateKeyFromRaw(randomBytes(32)),
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionGater: { denyDialMultiaddr: async () => false },
    services: {
      identify: identify(),
      pubsub: gossipsub({ allowPublishToZeroTopicPeers: true, emitSelf: false, globalSignaturePolicy: StrictNoSign }),
    },
  });
  const silent: Stream[] = [];
  // Holds the target's status stream open and answers nothing: the target must give up on its own deadline.
  if (o.status === 'silent') await node.handle(`${prefix}/status/1`, (s) => void silent.push(s));
  const pubsub = (
    node.services as { pubsub: { subscribe(t: string): void; publish(t: string, d: Uint8Array): Promise<unknown> } }
  ).pubsub;
  for (const t of ['txs', 'block', 'consensus', 'evidence']) pubsub.subscribe(`${prefix}/${t}/1`);
  const target = multiaddr(o.target);
  try {
    await node.dial(target);
  } catch (err) {
    await node.stop();
    throw err;
  }
  const targetId = target.getComponents().find((c) => c.name === 'p2p')?.value as string;
  const peer = node.getPeers().find((p) => p.toString() === targetId);
  if (!peer) throw new Error('raw peer did not connect');
  return {
    node,
    peerId: node.peerId.toString(),
    protocol: (name) => `${prefix}/${name}/1`,
    open: (name) => node.dialProtocol(peer, `${prefix}/${name}/1`, { signal: AbortSignal.timeout(10_000) }),
    publish: async (topic, data) => void (await pubsub.publish(`${prefix}/${topic}/1`, data).catch(() => undefined)),
    stop: async () => {
      for (const s of silent) s.abort(new Error('stop'));
      await node.stop();
    },
  };
}

/** A length-prefixed frame. */
export const lpFrame = (data: Uint8Array): Uint8Array => Buffer.concat([varint(data.length), data]);

/** Resolves when a stream is closed (by either side), with the ms it took from `since`. */
export function closedWithin(stream: Stream, since: number): Promise<number> {
  if (stream.status === 'closed' || stream.status === 'aborted' || stream.status === 'reset')
    return Promise.resolve(Date.now() - since);
  return new Promise((resolve) => stream.addEventListener('close', () => resolve(Date.now() - since), { once: true }));
}

/** Send a request frame on a stream and read the response frames up to the empty end frame (or the end). */
export async function exchange(stream: Stream, request: Uint8Array, maxFrame = 64 * 1024 * 1024): Promise<Uint8Array[]> {
  const lp = lpStream(stream, { maxDataLength: maxFrame, maxBufferSize: maxFrame + 8 });
  await lp.write(request);
  const out: Uint8Array[] = [];
  for (;;) {
    const f = (await lp.read({ signal: AbortSignal.timeout(20_000) })).subarray();
    if (f.length === 0) return out;
    out.push(f);
  }
}

/** Complete the status handshake from the raw peer's side (the target serves it from then on). */
export async function rawHandshake(raw: RawPeer, chainId: number, genesisHash: string, headHeight = 0): Promise<void> {
  const status = { chain_id: chainId, genesis_hash: genesisHash, head_height: headHeight, head_hash: '00'.repeat(32) };
  const s = await raw.open('status');
  const lp = lpStream(s);
  await lp.write(Buffer.from(JSON.stringify(status)));
  await lp.read({ signal: AbortSignal.timeout(10_000) });
  await s.close().catch(() => undefined);
}

/**
 * A peer on the node's own P2PNetwork that passes the handshake claiming the head `head()` and serves
 * no block at all (a liar when its claim is ahead), recording the heights of blocks gossiped to it.
 */
export async function startClaimingPeer(o: {
  chainId: number;
  genesisHash: string;
  target: string;
  head: () => number;
}): Promise<{ net: P2PNetwork; peerId: string; gossiped: number[]; stop(): Promise<void> }> {
  const gossiped: number[] = [];
  const net = new P2PNetwork({
    nodeKey: randomBytes(32),
    host: '127.0.0.1',
    port: 0,
    peers: [o.target],
    chainId: o.chainId,
    genesisHash: o.genesisHash,
    status: () => ({ chain_id: o.chainId, genesis_hash: o.genesisHash, head_height: o.head(), head_hash: 'ab'.repeat(32) }),
    blocks: async () => [],
    onTransaction: async () => undefined,
    onBlock: async (bytes) => void gossiped.push(blockHeightOf(bytes)),
    log: pino({ level: 'silent' }),
  });
  await net.start();
  return { net, peerId: net.peerId, gossiped, stop: () => net.stop() };
}
