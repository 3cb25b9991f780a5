/**
 * The staking module's state keys (Cosmos x/staking types/keys.go): the first byte of each record kind,
 * owned by this module (ts/ledger's dispatch table checks that no other module claims one), and the key
 * builders. The bytes are part of the state root: never renumber them.
 *
 * Keys (STAKING_NS byte || ...):
 * - validator     || validator20                      -> ValidatorRecord
 * - delegation    || delegator20 || validator20       -> DelegationRecord
 * - unbonding     || delegator20 || validator20 || complete_epoch u64 -> pool shares of the entry
 * - unbondingPool || validator20 || complete_epoch u64 -> { tokens, shares } (slashable as one)
 * - redelegation  || delegator20 || from20 || to20    -> { amount, complete_epoch }
 * - queue         || complete_epoch u64 [|| chunk u32] -> count / chunk of [delegator, validator] pairs
 * - global        || name                             -> registry, active set, totals, per-delegator lists
 * - epochStats    || epoch u64 || validator20         -> EpochStats
 * - ratio         || validator20 || epoch u64         -> `acc:commission_total` at the epoch's end (EpochCheckpoint)
 * - signing       || validator20                      -> SigningInfo (sliding window)
 * - redelegationEntries || source20 || creation_epoch u64 [|| chunk u32] -> redelegations.ts
 * - redelegationIn || delegator20 || destination20 -> redelegations.ts
 */
import { type KeyStr, keyStr } from '../../state/index.js';

/** One byte per record kind (values fixed since the staking fork; they were state/accounts.ts NS.staking*). */
export const STAKING_NS = {
  validator: 0x20,
  delegation: 0x21,
  unbonding: 0x22,
  unbondingPool: 0x23,
  redelegation: 0x24,
  queue: 0x25,
  global: 0x26,
  epochStats: 0x27,
  ratio: 0x28,
  signing: 0x29,
  redelegationEntries: 0x2a,
  redelegationIn: 0x2b,
} as const;

export const hex20 = (a: string): string => a.slice(2);
export const u64hex = (n: number): string => n.toString(16).padStart(16, '0');
export const u32hex = (n: number): string => n.toString(16).padStart(8, '0');
export const mk = (ns: number, hex: string): KeyStr => keyStr(Buffer.from(ns.toString(16).padStart(2, '0') + hex, 'hex'));

export const validatorKey = (v: string): KeyStr => mk(STAKING_NS.validator, hex20(v));
export const delegationKey = (d: string, v: string): KeyStr => mk(STAKING_NS.delegation, hex20(d) + hex20(v));
export const unbondingKey = (d: string, v: string, epoch: number): KeyStr =>
  mk(STAKING_NS.unbonding, hex20(d) + hex20(v) + u64hex(epoch));
export const unbondingPoolKey = (v: string, epoch: number): KeyStr => mk(STAKING_NS.unbondingPool, hex20(v) + u64hex(epoch));
export const redelegationKey = (d: string, from: string, to: string): KeyStr =>
  mk(STAKING_NS.redelegation, hex20(d) + hex20(from) + hex20(to));
export const queueCountKey = (epoch: number): KeyStr => mk(STAKING_NS.queue, u64hex(epoch));
export const queueChunkKey = (epoch: number, chunk: number): KeyStr => mk(STAKING_NS.queue, u64hex(epoch) + u32hex(chunk));
const GLOBAL_PREFIX = String.fromCharCode(STAKING_NS.global);
/**
 * The namespace byte, then the name's UTF-8 bytes, as a latin1 key string. Printable ASCII names (their UTF-8 bytes are
 * their char codes), so the key is built by concatenation: end-block work reads several of these on every block.
 */
export const globalKey = (name: string): KeyStr =>
  !/[^\x20-\x7e]/.test(name)
    ? ((GLOBAL_PREFIX + name) as KeyStr)
    : mk(STAKING_NS.global, Buffer.from(name, 'utf8').toString('hex'));
export const epochStatsKey = (epoch: number, v: string): KeyStr => mk(STAKING_NS.epochStats, u64hex(epoch) + hex20(v));
export const ratioKey = (v: string, epoch: number): KeyStr => mk(STAKING_NS.ratio, hex20(v) + u64hex(epoch));
export const signingKey = (v: string): KeyStr => mk(STAKING_NS.signing, hex20(v));
