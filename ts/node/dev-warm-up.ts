/**
 * The dev chain's JSON-RPC warm-up at start (rpc/warm-up.ts), as the node runs it: only with automine and no
 * interval mining (the Hardhat-style dev loop it is for), with the produced-block hook (its log line and
 * metrics) paused, so the warm-up's blocks, reverted at once, appear nowhere.
 */
import type { Logger } from 'pino';
import { dispatcherOf } from '../api/index.js';
import type { PoaEngine } from '../consensus/index.js';
import { createRpcDispatcher, warmUpRpc } from '../rpc/index.js';
import type { NodeContext } from '../services/index.js';

/** Whether the JSON-RPC warm-up runs: automine without interval mining. */
export function rpcWarmUpApplies(ctx: NodeContext): boolean {
  return ctx.dev !== undefined && ctx.dev.miner.automine && ctx.dev.miner.intervalMs === 0;
}

export async function warmUpDevRpc(ctx: NodeContext, poa: PoaEngine, log: Logger): Promise<void> {
  // The served dispatcher (its method table) is built now rather than by the first request.
  dispatcherOf(ctx);
  if (!rpcWarmUpApplies(ctx)) return;
  const t0 = performance.now();
  const onProduced = poa.onProduced;
  poa.onProduced = undefined;
  let complete: boolean;
  try {
    complete = await warmUpRpc(ctx, createRpcDispatcher(ctx));
  } finally {
    poa.onProduced = onProduced;
  }
  log.debug({ ms: Math.round(performance.now() - t0), complete }, 'dev chain JSON-RPC warm-up');
}
