/**
 * Joining by state sync (`--state-sync` on a fresh data dir; docs/p2p.md, "State sync", "Joining"): before the
 * chain opens, a libp2p host of its own asks the peers for snapshots and restores the chosen one
 * (ts/sync/state-sync-join.ts) while the API port answers only health, status and metrics
 * (../state-sync-server.ts). The chain then opens at the snapshot block and the node's networking block-syncs
 * from there. Without --state-sync, or on a data dir that already holds a chain, nothing happens here.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type Block, Chain, type ChainParams, TRIE_CHECKPOINT_FILE, genesisIdentity, hasChainHead } from '../../chain/index.js';
import { type KvStore, openRocksStore } from '../../storage/index.js';
import type { StateSyncStatus, TrustedSets, genesisTrustedSets } from '../../sync/index.js';
import type { NodeConfig } from '../config.js';
import { startStateSyncServer } from '../state-sync-server.js';

/** Restore the state from the peers' snapshots when --state-sync asks for it and the store is fresh. */
export async function buildStateSync(config: NodeConfig, db: KvStore, params: ChainParams, log: Logger): Promise<void> {
  if (!config.stateSync) return;
  if (await hasChainHead(db)) {
    log.info({}, 'state sync: the data directory already holds a chain; starting from it');
    return;
  }
  const slog = log.child({ component: 'state-sync' });
  // The joining code (and the libp2p it drives) loads only on a node that joins by state sync.
  const { genesisTrustedSets, initialStateSyncStatus, joinByStateSync } = await import('../../sync/index.js');
  const { genesis, trustedSets } = await genesisOf(params, config.dataDir, genesisTrustedSets);
  let status: StateSyncStatus = initialStateSyncStatus();
  // libp2p loads only on a node that joins a network.
  const { P2PNetwork } = await import('../../network/index.js');
  const genesisHash = genesisIdentity(params, genesis.hash);
  const net = new P2PNetwork({
    // A key of its own: the node's identity comes up with its networking once the state is restored.
    nodeKey: randomBytes(32),
    host: config.p2pHost,
    port: 0,
    peers: config.peers,
    chainId: params.chainId,
    genesisHash,
    status: () => ({ chain_id: params.chainId, genesis_hash: genesisHash, head_height: 0, head_hash: genesis.hash }),
    blocks: async () => [],
    onTransaction: async () => 'ignore',
    onBlock: async () => 'ignore',
    log: slog,
  });
  const server = await startStateSyncServer({
    host: config.apiHost,
    port: config.apiPort,
    nodeName: config.nodeName,
    chainId: params.chainId,
    status: () => status,
    peers: () => net.connectedPeerIds().length,
  });
  slog.info({ api: `http://${config.apiHost}:${server.port}`, trust: config.stateSyncTrust ?? null }, 'state sync: joining');
  try {
    await net.start();
    const t0 = performance.now();
    const head = await joinByStateSync({
      db,
      net,
      genesis,
      params,
      trustedSets,
      trust: config.stateSyncTrust,
      checkpointPath: join(config.dataDir, TRIE_CHECKPOINT_FILE),
      onStatus: (s) => {
        status = s;
      },
      log: (fields, msg) => slog.info(fields, msg),
      warn: (fields, msg) => slog.warn(fields, msg),
    });
    slog.info({ height: head.index, ms: Math.round(performance.now() - t0) }, 'state sync: done, block sync continues from here');
  } finally {
    await net.stop().catch(() => undefined);
    await server.close();
  }
}

/**
 * This chain's genesis block, made in a scratch store (the node's own store must stay free of state), and the
 * validator sets its genesis state trusts (the light-client check of the snapshot block starts from them).
 */
async function genesisOf(
  params: ChainParams,
  dataDir: string,
  trustedSetsOf: typeof genesisTrustedSets,
): Promise<{ genesis: Block; trustedSets: TrustedSets }> {
  const dir = join(dataDir, 'state-sync-genesis');
  rmSync(dir, { recursive: true, force: true });
  const scratch = await openRocksStore(dir);
  try {
    const chain = new Chain(params, scratch, 1);
    await chain.open();
    await chain.blocks.history.close();
    return { genesis: (await chain.blocks.getBlock(0)) as Block, trustedSets: trustedSetsOf(params, chain.state) };
  } finally {
    await scratch.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
