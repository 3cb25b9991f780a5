/**
 * A misbehaving state-sync peer as a process of its own, for the fault tests with real processes
 * (test/network/state-sync-faults.test.ts; docs/p2p.md, "State sync", "Fault tests"). It is the node's own
 * libp2p host (P2PNetwork, the node key it is given, so the joining node can list it in --peers) and serves the
 * snapshots of a real node's snapshot directory, read live from disk, with one fault:
 *
 * - `corrupt`: the offers and manifests as they are, every chunk with its last byte flipped;
 * - `hang`: the first `honestChunks` chunk requests answered, every later one held open, never answered
 *   (until the process is killed: a peer that disappears mid-transfer);
 * - `forged-root`: instead of the directory's newest snapshot (height H), a forged one of block H+1: that
 *   block's real hash, a state root recomputed from forged subtrees (the offer and the manifest agree with each
 *   other, not with the block);
 * - `forged-manifest`: the same forged subtrees, but offer and manifest name block H+1's real state root (the
 *   manifest's subtrees do not hash to it).
 *
 * Blocks asked of it (`P/blocks/1`) are relayed from `upstream` (a real node it keeps connected), so a joining
 * node can check a forged offer against the real block. It logs one JSON line per event on stdout.
 *
 * Usage: node dist/test/helpers/snapshot-fault-peer.js '<FaultPeerConfig as JSON>'
 */
import { decodeBlock } from '../../ts/chain/index.js';
import { P2PNetwork, type SnapshotOffer, type SnapshotSource } from '../../ts/network/index.js';
import { type SnapshotManifest, SnapshotDirectory, encodeManifest, manifestId, snapshotSource } from '../../ts/snapshot/index.js';
import { rootFromSubtrees } from '../../ts/snapshot/index.js';
import { fromHex } from '../../ts/util/index.js';
import { corruptingSource } from './snapshot-peers.js';

export type SnapshotFault = 'none' | 'corrupt' | 'hang' | 'forged-root' | 'forged-manifest';

export interface FaultPeerConfig {
  /** 32-byte node key, hex. */
  nodeKey: string;
  port: number;
  chainId: number;
  /** The network identity (genesisIdentity). */
  genesisHash: string;
  /** A real node's multiaddr (with /p2p/<id>): kept connected, blocks are relayed from it. */
  upstream: string;
  /** The snapshots directory served (a real node's `<data-dir>/snapshots`, read live). */
  snapshots: string;
  fault: SnapshotFault;
  /** `hang`: chunk requests answered before it holds them all. */
  honestChunks?: number;
}

const say = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
};

/** Chunks answered honestly `honest` times, then held forever. */
function hang(source: SnapshotSource, honest: number): SnapshotSource {
  let answered = 0;
  return {
    offers: () => source.offers(),
    async part(height, id, index) {
      if (index === 'manifest') return source.part(height, id, index);
      if (answered < honest) {
        answered++;
        const bytes = await source.part(height, id, index);
        say('served-chunk', { height, index, missing: bytes === null });
        return bytes;
      }
      say('holding-chunk', { height, index });
      return new Promise<Uint8Array | null>(() => undefined);
    },
  };
}

/**
 * The forged snapshot of block H+1 built on the newest honest manifest (height H): its first subtree's hash
 * altered, the state root recomputed from the subtrees (`forged-root`) or left at the block's (`forged-manifest`).
 * The same on every fault peer given the same directory, so two of them offer one id (the two-peer rule).
 */
function forged(
  dir: SnapshotDirectory,
  blockAt: (height: number) => Promise<{ hash: string; state_root: string }>,
  keepRoot: boolean,
): SnapshotSource {
  let current: { offer: SnapshotOffer; bytes: Buffer } | null = null;
  const build = async (): Promise<typeof current> => {
    const height = dir.heights()[0];
    if (height === undefined) return null;
    if (current?.offer.height === height + 1) return current;
    const honest = await dir.manifest(height);
    if (honest === null) return null;
    const block = await blockAt(height + 1);
    const subtrees = honest.subtrees.map((s, i) =>
      i === 0
        ? { ...s, hash: `${s.hash.slice(0, 62)}${(Number.parseInt(s.hash.slice(62), 16) ^ 1).toString(16).padStart(2, '0')}` }
        : s,
    );
    const root = Buffer.from(
      rootFromSubtrees(subtrees.map((s) => ({ prefix: s.prefix, entries: s.entries, hash: fromHex(s.hash) }))),
    ).toString('hex');
    const m: SnapshotManifest = {
      ...honest,
      height: height + 1,
      block_hash: block.hash,
      state_root: keepRoot ? block.state_root : root,
      subtrees,
    };
    const offer = {
      height: m.height,
      block_hash: m.block_hash,
      state_root: m.state_root,
      id: manifestId(m),
      chunks: m.chunks.length,
    };
    say('forged-offer', { ...offer, real_state_root: block.state_root });
    current = { offer, bytes: encodeManifest(m) };
    return current;
  };
  return {
    async offers() {
      const f = await build().catch((err: Error) => {
        say('forge-failed', { err: err.message });
        return null;
      });
      return f ? [f.offer] : [];
    },
    async part(height, id, index) {
      if (current?.offer.height !== height || current.offer.id !== id) return null;
      say('forged-part', { height, index });
      return index === 'manifest' ? current.bytes : null;
    },
  };
}

async function main(): Promise<void> {
  const c = JSON.parse(process.argv[2] ?? '') as FaultPeerConfig;
  const upstreamId = c.upstream.split('/p2p/')[1];
  const dir = new SnapshotDirectory(c.snapshots);
  let net: P2PNetwork | null = null;
  const upstreamBlocks = async (from: number, count: number): Promise<Uint8Array[]> =>
    (await net?.requestBlocks(upstreamId, from, count)) ?? [];
  const relayBlocks = async (from: number, count: number): Promise<Uint8Array[]> => {
    const blocks = await upstreamBlocks(from, count);
    say('relayed-blocks', { from, count: blocks.length });
    return blocks;
  };
  /** A block of the upstream's chain; the one after its newest snapshot may be a block time away. */
  const blockAt = async (height: number) => {
    for (let tries = 0; tries < 50; tries++) {
      const [bytes] = await upstreamBlocks(height, 1).catch(() => []);
      if (bytes) return decodeBlock(bytes);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`upstream has no block ${height}`);
  };
  const honest = snapshotSource(dir);
  const snapshots =
    c.fault === 'none'
      ? honest
      : c.fault === 'corrupt'
        ? corruptingSource(honest, (height, index) => say('corrupt-chunk', { height, index }))
        : c.fault === 'hang'
          ? hang(honest, c.honestChunks ?? 0)
          : forged(dir, blockAt, c.fault === 'forged-manifest');
  const quiet = () => undefined;
  net = new P2PNetwork({
    nodeKey: fromHex(c.nodeKey),
    host: '127.0.0.1',
    port: c.port,
    peers: [c.upstream],
    chainId: c.chainId,
    genesisHash: c.genesisHash,
    status: () => ({ chain_id: c.chainId, genesis_hash: c.genesisHash, head_height: 0, head_hash: '00'.repeat(32) }),
    blocks: relayBlocks,
    onTransaction: async () => 'ignore',
    onBlock: async () => 'ignore',
    snapshots,
    log: {
      info: quiet,
      debug: quiet,
      warn: (o: object, m: string) => say('warn', { msg: m, ...o }),
    },
  });
  await net.start();
  say('listening', { peer_id: net.peerId, fault: c.fault });
  const stop = () => {
    void net?.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: Error) => {
  say('failed', { err: err.stack ?? err.message });
  process.exit(1);
});
