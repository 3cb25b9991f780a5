/** Joining the network (--p2p-port): libp2p, block sync, relay, evidence and the BFT engine (../network.ts). */
import type { Logger } from 'pino';
import type { PoaEngine } from '../../consensus/index.js';
import type { KeyPair } from '../../ledger/index.js';
import type { NodeMetrics } from '../../metrics/index.js';
import type { NodeContext } from '../../services/index.js';
import type { NodeCore } from './stops.js';
import type { NodeConfig } from '../config.js';
import type { Networking } from '../network.js';

/** Sets `ctx.network`; the Networking's own stop stops the engine, sync and host. */
export async function buildNetwork(
  config: NodeConfig,
  ctx: NodeContext,
  core: NodeCore,
  poa: PoaEngine,
  validatorKey: KeyPair,
  metrics: NodeMetrics,
  log: Logger,
): Promise<Networking> {
  const { chain, admission, mempool } = core;
  // libp2p and its ~500 modules load only on a node that joins a network (--p2p-port).
  const { startNetworking } = await import('../network.js');
  const networking = await startNetworking({ config, chain, mempool, admission, poa, validatorKey, metrics, log });
  ctx.network = networking.view;
  return networking;
}
