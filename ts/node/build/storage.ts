/**
 * Storage and chain: the database (main.ts may have started opening it), the chain over it with its state
 * trie checkpoints, and the state index (rich list, holders, delegations) that follows every commit.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Chain, type ChainParams, DEFAULT_CHECKPOINT_EVERY_BLOCKS, TRIE_CHECKPOINT_FILE } from '../../chain/index.js';
import { openStateIndex, stopStateIndex } from '../../indexes/index.js';
import type { KvStore } from '../../storage/index.js';
import type { NodeConfig } from '../config.js';
import { settleDevGenesis } from '../genesis-params.js';
import { openNodeStore } from '../node-store.js';
import { startStateSnapshots, stopStateSnapshots } from '../state-snapshots.js';
import type { Built } from './stops.js';

/** The data dir's database: `store` when main.ts started opening it (node-store.ts), else opened here. */
export async function buildDatabase(config: NodeConfig, store?: Promise<KvStore>): Promise<Built<{ db: KvStore }>> {
  const db = await (store ?? openNodeStore(config.dataDir));
  return { db, stop: () => db.close() };
}

/** The chain of `genesis` (the dev chain's recorded one when there is), opened, with its state index. */
export async function buildChain(
  config: NodeConfig,
  db: KvStore,
  genesis: ChainParams,
  log: Logger,
): Promise<Built<{ chain: Chain; params: ChainParams }>> {
  const params = await settleDevGenesis(config, genesis, db);
  const chain = new Chain(params, db, config.windowSize, {
    history: config.history,
    stateCacheBytes: config.stateCacheBytes,
    trieCheckpoint: { path: join(config.dataDir, TRIE_CHECKPOINT_FILE), everyBlocks: DEFAULT_CHECKPOINT_EVERY_BLOCKS },
  });
  chain.on('checkpoint', (height, err, ms) => {
    if (err) log.warn({ err, height }, 'state trie checkpoint failed');
    else log.debug({ height, ms: Math.round(ms) }, 'state trie checkpoint written');
  });
  await chain.open();
  log.info({ ...chain.trieStart, ms: Math.round(chain.trieStart?.ms ?? 0) }, 'state trie opened');
  // Rich list, holders and delegation lists follow every commit from now on (on disk: current at once
  // after a clean stop, else rebuilt from the state in the background while queries wait).
  await openStateIndex(chain, { log: (level, fields, msg) => log[level](fields, msg) });
  // State snapshots for joining nodes every --snapshot-interval durable blocks (none with 0).
  startStateSnapshots(config, chain, db, log);
  log.info({ height: chain.height, head: chain.head.hash, chain_id: params.chainId, network: params.network }, 'chain opened');
  return {
    chain,
    params,
    stop: async () => {
      await stopStateSnapshots(chain);
      await stopStateIndex(chain);
      // The trie as of the head, so the next start loads it instead of re-hashing the state.
      await chain.checkpointNow().catch((err) => log.warn({ err }, 'state trie checkpoint at shutdown failed'));
    },
  };
}
