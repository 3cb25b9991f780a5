/**
 * eth_simulateV1 over the state after a block (the head by default): the base block's environment, the
 * call pool's limits (the RPC gas cap for all calls together, the EVM timeout for the whole simulation).
 */
import type { CallState, SimBlockSpec, SimulateOutcome } from '../execution/index.js';
import { NotFoundError, fromHex } from '../util/index.js';
import type { ChainContext } from './context.js';
import { callRunnerOf, runInCallPool } from './evm-queries.js';
import { stateAt } from './state-at.js';

export interface SimulateRequest {
  blocks: SimBlockSpec[];
  validation: boolean;
  traceTransfers: boolean;
}

/** Runs the simulation on the state after block `height` (the head when undefined). */
export async function simulateV1(ctx: ChainContext, req: SimulateRequest, height?: number): Promise<SimulateOutcome> {
  const runner = callRunnerOf(ctx);
  let snapshot: CallState & { release(): void };
  if (height === undefined) {
    await ctx.chain.settled();
    snapshot = ctx.chain.state.snapshot();
  } else snapshot = await stateAt(ctx, height);
  try {
    const baseHeight = height ?? ctx.chain.height;
    const base = await ctx.chain.blocks.getBlock(baseHeight);
    if (!base) throw new NotFoundError(`block #${baseHeight} not found`);
    const env = ctx.chain.blockEnv(base.index, base.validator, base.timestamp);
    const simulate = { ...req, gasCap: runner.gasCap, baseHash: fromHex(base.hash) };
    const reply = await runInCallPool(ctx, { kind: 'simulate', env, snapshot, args: {}, cap: 0n, simulate });
    if (reply.kind !== 'simulate') throw new Error(`unexpected simulate reply ${reply.kind}`);
    return reply.outcome;
  } finally {
    snapshot.release();
  }
}
