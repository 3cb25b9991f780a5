/**
 * Redelegation entries (Cosmos x/staking): a redelegation moves stake to another validator at once, but
 * for the unbonding period the moved stake still answers for infractions its source validator committed
 * before the move. Entries are kept per source validator and creation epoch, so slashing a source reads
 * only its own entries of the last UNBONDING_EPOCHS epochs (never every delegator), and an epoch's lists
 * are deleted when they mature.
 *
 * Keys (STAKING_NS, keys.ts):
 * - redelegationEntries || source20 || creation_epoch u64 [|| chunk u32] -> count / chunk of entries
 * - redelegationIn      || delegator20 || destination20 -> the last complete_epoch of redelegations into it
 */
import type { StateOverlay, StateReader } from '../../state/index.js';
import { STAKING_NS, hex20, mk, u32hex, u64hex } from './keys.js';
import { type ChunkedListKeys, listAppend, listDelete, listRead } from './state.js';

/** One redelegation, as its source's slash needs it. */
export interface RedelegationEntry {
  delegator: string;
  to: string;
  /** Tokens (base units) moved. */
  initial: bigint;
  /** Destination shares the move created. */
  dst_shares: bigint;
  creation_height: number;
}

const entryKeys = (source: string, epoch: number): ChunkedListKeys => ({
  count: mk(STAKING_NS.redelegationEntries, hex20(source) + u64hex(epoch)),
  chunk: (c) => mk(STAKING_NS.redelegationEntries, hex20(source) + u64hex(epoch) + u32hex(c)),
});
const inKey = (d: string, to: string) => mk(STAKING_NS.redelegationIn, hex20(d) + hex20(to));

export function addRedelegationEntry(state: StateOverlay, source: string, epoch: number, e: RedelegationEntry): void {
  listAppend(state, entryKeys(source, epoch), [
    e.delegator,
    e.to,
    e.initial.toString(),
    e.dst_shares.toString(),
    e.creation_height,
  ]);
}

export function redelegationEntries(state: StateReader, source: string, epoch: number): RedelegationEntry[] {
  return listRead<[string, string, string, string, number]>(state, entryKeys(source, epoch)).map(
    ([delegator, to, initial, dst, creation_height]) => ({
      delegator,
      to,
      initial: BigInt(initial),
      dst_shares: BigInt(dst),
      creation_height,
    }),
  );
}

/** Drop a source's entries created in an epoch (they have matured). */
export const dropRedelegationEntries = (state: StateOverlay, source: string, epoch: number): void =>
  listDelete(state, entryKeys(source, epoch));

/** The epoch from which every redelegation of delegator d into validator `to` has matured (0: none). */
export function incomingRedelegationUntil(state: StateReader, d: string, to: string): number {
  const raw = state.get(inKey(d, to));
  return raw ? Number(raw.toString('utf8')) : 0;
}

export function putIncomingRedelegation(state: StateOverlay, d: string, to: string, completeEpoch: number): void {
  state.set(inKey(d, to), Buffer.from(String(completeEpoch), 'utf8'));
}
