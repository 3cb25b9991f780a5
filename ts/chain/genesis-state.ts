/**
 * The genesis state: allocations credited to their accounts, the supply record and the validators' stakes.
 * A large allocation (a benchmark's millions of accounts) is streamed to the `S` table and the trie in chunks
 * before the genesis block is written, so no value stays in memory.
 */
import { applyGenesisStakes, getSupply, putSupply, baseToWei } from '../ledger/index.js';
import {
  getAccount,
  putAccount,
  STREAM_CHUNK,
  StateOverlay,
  type StateReader,
  type StateStore,
  keyBytes,
} from '../state/index.js';
import { type KvStore, stateKey } from '../storage/index.js';
import type { ChainParams } from './params.js';

/** Genesis allocations into a fresh state; minted supply starts at their sum. */
export function applyGenesisAlloc(params: ChainParams, overlay: StateOverlay): void {
  finishGenesis(params, overlay, allocAccounts(overlay, params.alloc));
}

/** A state with nothing in it (what the genesis allocation is written over). */
const EMPTY_STATE: StateReader = { get: () => undefined };

/** Credit allocations to their accounts; returns their sum in wei. */
function allocAccounts(overlay: StateOverlay, alloc: Iterable<[string, bigint]>): bigint {
  let minted = 0n;
  for (const [addr, base] of alloc) {
    const acc = getAccount(overlay, addr);
    acc.balance += baseToWei(base);
    putAccount(overlay, addr, acc);
    minted += baseToWei(base);
  }
  return minted;
}

/** The rest of genesis once the allocations are in: the supply record and the validators' stakes. */
export function finishGenesis(params: ChainParams, overlay: StateOverlay, minted: bigint): void {
  putSupply(overlay, { minted, burned: getSupply(overlay).burned });
  applyGenesisStakes(
    overlay,
    params.validators.map((v) => ({ address: v.address, name: v.name, public_key: v.public_key, stake: v.stake ?? 0n })),
  );
}

/**
 * A large allocation (more accounts than a stream chunk) goes to `S` and the trie in chunks, before the
 * genesis block. A crash before the genesis block is written leaves only those entries, which the next start
 * writes again with the same values. Returns the minted sum (finishGenesis then completes the genesis state),
 * or null when the allocation is to be written with the genesis block (small, or addresses not all in the
 * lower case readGenesisFile gives them: two spellings of one account must add up in one overlay).
 */
export async function streamGenesisAlloc(params: ChainParams, db: KvStore, state: StateStore): Promise<bigint | null> {
  const alloc = params.alloc;
  if (alloc.size <= STREAM_CHUNK) return null;
  for (const addr of alloc.keys()) if (addr !== addr.toLowerCase()) return null;
  let minted = 0n;
  let chunk: [string, bigint][] = [];
  const flush = async (): Promise<void> => {
    const overlay = new StateOverlay(EMPTY_STATE);
    minted += allocAccounts(overlay, chunk);
    chunk = [];
    const keys: Buffer[] = [];
    const values: Buffer[] = [];
    const batch = db.batch();
    for (const [k, v] of overlay.changes) {
      const key = keyBytes(k);
      keys.push(key);
      values.push(v as Buffer);
      batch.put(stateKey(key), v as Buffer);
    }
    await batch.write();
    state.loadCommitted(keys, values);
  };
  for (const entry of alloc) {
    chunk.push(entry);
    if (chunk.length >= STREAM_CHUNK) await flush();
  }
  if (chunk.length > 0) await flush();
  return minted;
}
