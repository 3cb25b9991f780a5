/**
 * Block production, the last part to start and the first to stop: PoA's hooks (wired before the network,
 * which chains its block relay onto them), then who produces — nobody on a full node, the dev chain's miner
 * (with its JSON-RPC warm-up in the background), or PoA on an authority.
 */
import type { Logger } from 'pino';
import type { RpcDispatchers } from '../../api/index.js';
import type { ChainParams } from '../../chain/index.js';
import type { PoaEngine } from '../../consensus/index.js';
import type { KeyPair } from '../../ledger/index.js';
import type { TxAdmission } from '../../mempool/index.js';
import type { NodeMetrics } from '../../metrics/index.js';
import type { NodeContext } from '../../services/index.js';
import type { NodeConfig } from '../config.js';
import { rpcWarmUpApplies, warmUpDevRpc } from '../dev-warm-up.js';
import type { Built } from './stops.js';

/** PoA's hooks: the pool after a block, metrics and logs of each block, and `onFatal` when production fails. */
export function wireBlockProduction(
  config: NodeConfig,
  ctx: NodeContext,
  admission: TxAdmission,
  consensus: PoaEngine,
  metrics: NodeMetrics,
  log: Logger,
  onFatal: () => void,
): void {
  consensus.onPoolChanged = () => admission.onBlock();
  consensus.onProduced = (info) => {
    metrics.blockProduced(info);
    const fields = { ...info, gasUsed: Number(info.gasUsed) };
    // A late block costs the next slot (PoA waits for the following slot boundary).
    if (info.lateMs > 0) log.warn({ ...fields, blockTimeMs: config.blockTimeMs }, 'block ran late: committed after its slot');
    else if (info.txCount > 0) log.info(fields, 'block produced');
    else log.debug(fields, 'block produced');
  };
  consensus.onError = (err) => {
    log.fatal({ err }, 'block production failed; stopping (restart resumes from the last committed block)');
    onFatal();
  };
}

export interface ProductionParts {
  params: ChainParams;
  consensus: PoaEngine;
  key: KeyPair;
  /** The node's served JSON-RPC dispatchers (built before the dev chain's warm-up). */
  rpc: RpcDispatchers;
  log: Logger;
}

/** Starts producing; `devWarmUp` resolves when the dev chain's JSON-RPC warm-up is done (false: it did not run). */
export async function startProduction(
  config: NodeConfig,
  ctx: NodeContext,
  p: ProductionParts,
): Promise<Built<{ devWarmUp: Promise<boolean> }>> {
  const { consensus, key, log } = p;
  let devWarmUp: Promise<boolean> = Promise.resolve(false);
  if (config.role === 'full') log.info({}, 'full node: following the network, not producing blocks');
  else if (ctx.dev) {
    // The JSON-RPC warm-up deploys the same contract through the served path (estimate, send, block,
    // commit, receipt): where it runs, the services' warm-up would only repeat its first half.
    if (!rpcWarmUpApplies(ctx)) await ctx.dev.warmUp(ctx);
    ctx.dev.start();
    // The served dispatcher is built at once, before the first request needs it.
    p.rpc.of(ctx);
    devWarmUp = warmUpDevRpc(ctx, config, key, log);
  } else if (p.params.validators.some((v) => v.address === key.address)) consensus.start();
  else log.warn({ address: key.address }, 'this node is not an authority; not producing blocks');
  return {
    devWarmUp,
    stop: async () => {
      await devWarmUp;
      await ctx.dev?.stop();
      await consensus.stop();
    },
  };
}
