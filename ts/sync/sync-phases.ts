/**
 * Where a catch-up pass spends its time, logged with every progress line: waiting for the network
 * (nothing queued to import), decoding, verifying signatures ahead in batches, and importing (every
 * block rule, execution, commit, listeners), with the download's own counters beside them.
 */
import type { FetchStats } from './range-fetcher.js';

export interface SyncPhases {
  /** CPU time of the whole process (all threads) during the pass. */
  cpu_ms: number;
  blocks: number;
  txs: number;
  signatures: number;
  /** The importer waited for blocks to arrive. */
  wait_ms: number;
  decode_ms: number;
  /** Gathering a batch's signatures for verification ahead of import (main thread). */
  verify_ms: number;
  /** Waiting for a batch's verification to finish (it runs on the verification thread, overlapping imports). */
  verify_wait_ms: number;
  /** Chain.importBlock and the mempool's update, per block; of it: */
  import_ms: number;
  /** validateAndApply (every rule, execution, state root); */
  validate_ms: number;
  /** the atomic database write; */
  write_ms: number;
  /** the chain's block listeners (indexes, event feeds). */
  listeners_ms: number;
  ranges: number;
  bytes: number;
  /** Range requests from sending to their last block, summed (overlaps the phases above). */
  request_ms: number;
}

export const emptyPhases = (): SyncPhases => ({
  cpu_ms: 0,
  blocks: 0,
  txs: 0,
  signatures: 0,
  wait_ms: 0,
  decode_ms: 0,
  verify_ms: 0,
  verify_wait_ms: 0,
  import_ms: 0,
  validate_ms: 0,
  write_ms: 0,
  listeners_ms: 0,
  ranges: 0,
  bytes: 0,
  request_ms: 0,
});

export function addFetchStats(p: SyncPhases, s: FetchStats): void {
  p.ranges += s.ranges;
  p.bytes += s.bytes;
  p.request_ms += s.requestMs;
}

/** Whole milliseconds, for the log. */
export function roundPhases(p: SyncPhases): SyncPhases {
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Math.round(v)])) as unknown as SyncPhases;
}
