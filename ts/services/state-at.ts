/**
 * The state at a past height for every interface (REST `at_height`, the eth_ methods' block parameter,
 * gRPC, tracing): a read-only view over the chain's change sets and history index (chain/state-history.ts).
 */
import type { HistoricalStateView } from '../chain/index.js';
import type { StateReader } from '../state/index.js';
import type { ChainContext } from './context.js';

export type { HistoricalStateView } from '../chain/index.js';

/**
 * A read-only view of the state after block `height`; `release()` it when done. Throws NoSuchHeightError
 * (404 / -32000) above the head and HistoryUnavailableError (400 / -32000, naming the oldest available
 * height) below the history the node keeps (`--history`).
 */
export function stateAt(ctx: ChainContext, height: number): Promise<HistoricalStateView> {
  return ctx.chain.stateAt(height);
}

/**
 * Runs `use` over the state after block `height` (the live head state when `height` is undefined or the
 * head), releasing the view when `use` settles.
 */
export async function withStateAt<T>(
  ctx: ChainContext,
  height: number | undefined,
  use: (state: StateReader) => T | Promise<T>,
): Promise<T> {
  if (height === undefined || height === ctx.chain.height) return use(ctx.chain.state);
  const view = await stateAt(ctx, height);
  try {
    return await use(view);
  } finally {
    view.release();
  }
}
