import type { ChainReader } from '../chain/interface.js';
import { type FoundLog, type LogFilter, matchingLogs } from '../events/index.js';

/**
 * Logs matching the filter, ordered by block, transaction index, log index. Candidate blocks come from
 * the log index (chain/log-index.ts: one bloom scan over the in-memory window, postings on disk for older
 * blocks); only their receipts are read, and every log is matched exactly.
 */
// The chain alone (ChainContext's shape): NodeContext holds the filter registry, which matches logs here.
export async function findLogs(ctx: { chain: ChainReader }, f: LogFilter): Promise<FoundLog[]> {
  const blocks = ctx.chain.blocks;
  const heights = await blocks.logIndex.candidates(f.fromBlock, f.toBlock, f);
  const out: FoundLog[] = [];
  for (const src of await blocks.logSources(heights)) out.push(...matchingLogs(src, f));
  return out;
}
