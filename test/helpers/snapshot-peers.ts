/**
 * libp2p hosts of one test chain for the snapshot protocols: a host serving a SnapshotSource (or none), its
 * multiaddr, and a snapshot of a small real chain cut finely into several chunks.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { P2PNetwork, type SnapshotSource } from '../../ts/network/index.js';
import { SnapshotAbort, SnapshotDirectory, type SnapshotManifest, startSnapshot } from '../../ts/snapshot/index.js';
import type { KvStore } from '../../ts/storage/index.js';
import { extendTo, openCheckpointChain } from './checkpoint-chain.js';

export const SNAPSHOT_TEST_CHAIN_ID = 7120;
const GENESIS = 'cd'.repeat(32);

/** A host of the test chain; `penalties` collects the reasons of the penalties it gives. */
export function snapshotHost(opts: { peers?: string[]; snapshots?: SnapshotSource; penalties?: string[] }): P2PNetwork {
  const id = SNAPSHOT_TEST_CHAIN_ID;
  return new P2PNetwork({
    nodeKey: randomBytes(32),
    host: '127.0.0.1',
    port: 0,
    peers: opts.peers ?? [],
    chainId: id,
    genesisHash: GENESIS,
    status: () => ({ chain_id: id, genesis_hash: GENESIS, head_height: 0, head_hash: '00'.repeat(32) }),
    blocks: async () => [],
    onTransaction: async () => undefined,
    onBlock: async () => undefined,
    snapshots: opts.snapshots,
    log: {
      info: () => undefined,
      debug: () => undefined,
      warn: (o: object, m: string) => {
        if (m === 'peer penalized') opts.penalties?.push((o as { reason: string }).reason);
      },
    },
  });
}

export const snapshotTestGenesis = GENESIS;

/** A host's 127.0.0.1 multiaddr with its peer id. */
export function addrOf(n: P2PNetwork): string {
  const a = n.listenAddrs.find((x) => x.includes('127.0.0.1')) as string;
  return a.includes('/p2p/') ? a : `${a}/p2p/${n.peerId}`;
}

/** A dev chain of `blocks` blocks in `dir`/server and a snapshot of its head cut into several chunks. */
export async function chainSnapshot(
  dir: string,
  blocks: number,
): Promise<{
  db: KvStore;
  head: { index: number; hash: string; state_root: string };
  snapshots: SnapshotDirectory;
  manifest: SnapshotManifest;
}> {
  const { chain, db } = await openCheckpointChain(join(dir, 'server'));
  await extendTo(chain, blocks);
  const head = chain.head;
  const snapshots = new SnapshotDirectory(join(dir, 'snapshots'));
  const fine = { subtreeMaxBytes: 1, chunkTargetBytes: 400, spillBytes: 64 };
  const block = { height: head.index, hash: head.hash, stateRoot: head.state_root };
  const manifest = await startSnapshot(db, block, snapshots.root, new SnapshotAbort(), fine);
  return { db, head, snapshots, manifest };
}

/** `honest` with every chunk's last byte flipped (the chunk no longer hashes to the manifest's); `onCorrupt` sees each. */
export function corruptingSource(
  honest: SnapshotSource,
  onCorrupt: (height: number, index: number) => void = () => {},
): SnapshotSource {
  return {
    offers: () => honest.offers(),
    async part(height, id, index) {
      const bytes = await honest.part(height, id, index);
      if (bytes === null || index === 'manifest') return bytes;
      const bad = Buffer.from(bytes);
      bad[bad.length - 1] ^= 1;
      onCorrupt(height, index);
      return bad;
    },
  };
}
