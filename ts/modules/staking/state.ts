/**
 * Staking records in the authenticated state (inside the state root). Values are JSON with a fixed field
 * order and amounts as decimal strings, so every node writes the same bytes.
 * Keys: keys.ts.
 */
import type { KeyStr, StateOverlay, StateReader } from '../../state/index.js';
import {
  STAKING_NS,
  delegationKey,
  epochStatsKey,
  globalKey,
  queueChunkKey,
  queueCountKey,
  ratioKey,
  redelegationKey,
  signingKey,
  unbondingKey,
  unbondingPoolKey,
  validatorKey,
} from './keys.js';

export type ValidatorStatus = 'bonded' | 'jailed' | 'tombstoned';

export interface ValidatorRecord {
  address: string;
  name: string;
  public_key: string;
  commission_bps: bigint;
  /** Epoch of the last commission change (-1: never changed). */
  commission_epoch: number;
  /** Bonded coins (base units): every delegation's value, after slashes. */
  tokens: bigint;
  /** Delegation shares issued; a share is worth tokens / shares. */
  shares: bigint;
  status: ValidatorStatus;
  jailed_until_epoch: number;
  registered_height: number;
  /** F1: cumulative delegator reward per share (wei, scaled by RATIO_SCALE). */
  acc: bigint;
  /** Commission earned and not yet claimed (wei). */
  commission_unclaimed: bigint;
  /** Delegators' rewards distributed to this validator, all time (wei). */
  rewards_total: bigint;
  commission_total: bigint;
}

export interface DelegationRecord {
  shares: bigint;
  /** acc of the validator when the rewards of this delegation were last settled. */
  start_acc: bigint;
  since_epoch: number;
}

export interface EpochStats {
  blocks: number;
  signed: number;
  missed: number;
  /** Delegators' rewards distributed in the epoch (wei). */
  rewards: bigint;
  commission: bigint;
}

export interface SigningInfo {
  /** Records in the window so far (capped at the window). */
  count: number;
  /** Next position in the window. */
  index: number;
  /** Window bitmap as hex, bit set = missed. */
  bits: string;
  missed: number;
  signed_total: number;
  missed_total: number;
}

export interface ActiveMember {
  address: string;
  name: string;
  public_key: string;
  /** Voting power = bonded stake in base units at the epoch boundary. */
  power: bigint;
}

export interface ActiveSet {
  epoch: number;
  members: ActiveMember[];
}

export interface StakingTotals {
  /** Σ validator tokens (base units). */
  bonded: bigint;
  /** Σ unbonding pool tokens (base units). */
  unbonding: bigint;
  /** Rewards distributed and not yet claimed, including rounding dust (wei). */
  rewards_pool: bigint;
}

const REGISTRY = globalKey('validators');
const ACTIVE = globalKey('active');
const TOTALS = globalKey('totals');
const POA_SET = globalKey('poa');
const delegatorListKey = (d: string): KeyStr => globalKey(`dv:${d}`);
const activeHistoryKey = (epoch: number): KeyStr => globalKey(`active:${epoch}`);
/** The active set in force at a height, kept when the set first changes during that height. */
const activeBeforeChangeKey = (height: number): KeyStr => globalKey(`active-at:${height}`);

/** JSON with bigints as decimal strings (field order is the object's, fixed by the writers below). */
const enc = (o: unknown): Buffer => Buffer.from(JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
const dec = (b: Buffer): Record<string, unknown> => JSON.parse(b.toString('utf8'));
const big = (v: unknown): bigint => BigInt(v as string);

function readJson(state: StateReader, k: KeyStr): Record<string, unknown> | null {
  const raw = state.get(k);
  return raw ? dec(raw) : null;
}

export function getValidator(state: StateReader, v: string): ValidatorRecord | null {
  const o = readJson(state, validatorKey(v));
  if (!o) return null;
  return {
    address: v,
    name: o.name as string,
    public_key: o.public_key as string,
    commission_bps: big(o.commission_bps),
    commission_epoch: o.commission_epoch as number,
    tokens: big(o.tokens),
    shares: big(o.shares),
    status: o.status as ValidatorStatus,
    jailed_until_epoch: o.jailed_until_epoch as number,
    registered_height: o.registered_height as number,
    acc: big(o.acc),
    commission_unclaimed: big(o.commission_unclaimed),
    rewards_total: big(o.rewards_total),
    commission_total: big(o.commission_total),
  };
}

export function putValidator(state: StateOverlay, r: ValidatorRecord): void {
  state.set(
    validatorKey(r.address),
    enc({
      name: r.name,
      public_key: r.public_key,
      commission_bps: r.commission_bps,
      commission_epoch: r.commission_epoch,
      tokens: r.tokens,
      shares: r.shares,
      status: r.status,
      jailed_until_epoch: r.jailed_until_epoch,
      registered_height: r.registered_height,
      acc: r.acc,
      commission_unclaimed: r.commission_unclaimed,
      rewards_total: r.rewards_total,
      commission_total: r.commission_total,
    }),
  );
}

export function getDelegation(state: StateReader, d: string, v: string): DelegationRecord | null {
  const o = readJson(state, delegationKey(d, v));
  return o ? { shares: big(o.shares), start_acc: big(o.start_acc), since_epoch: o.since_epoch as number } : null;
}

/** Write (or delete, when no shares are left) a delegation, keeping the delegator's validator list in step. */
export function putDelegation(state: StateOverlay, d: string, v: string, r: DelegationRecord | null): void {
  const k = delegationKey(d, v);
  const existed = state.get(k) !== undefined;
  if (r && r.shares > 0n) {
    state.set(k, enc({ shares: r.shares, start_acc: r.start_acc, since_epoch: r.since_epoch }));
    if (!existed) setDelegatorValidators(state, d, [...delegatorValidators(state, d), v].sort());
  } else if (existed) {
    state.delete(k);
    setDelegatorValidators(
      state,
      d,
      delegatorValidators(state, d).filter((x) => x !== v),
    );
  }
}

/** Validators a delegator has delegations with (sorted). */
export function delegatorValidators(state: StateReader, d: string): string[] {
  const raw = state.get(delegatorListKey(d));
  return raw ? (JSON.parse(raw.toString('utf8')) as string[]) : [];
}

function setDelegatorValidators(state: StateOverlay, d: string, list: string[]): void {
  if (list.length) state.set(delegatorListKey(d), enc(list));
  else state.delete(delegatorListKey(d));
}

/** Registered validators, in registration order. */
export function registry(state: StateReader): string[] {
  const raw = state.get(REGISTRY);
  return raw ? (JSON.parse(raw.toString('utf8')) as string[]) : [];
}

export const putRegistry = (state: StateOverlay, list: string[]): void => state.set(REGISTRY, enc(list));

export function getTotals(state: StateReader): StakingTotals {
  const o = readJson(state, TOTALS);
  if (!o) return { bonded: 0n, unbonding: 0n, rewards_pool: 0n };
  return { bonded: big(o.bonded), unbonding: big(o.unbonding), rewards_pool: big(o.rewards_pool) };
}

export const putTotals = (state: StateOverlay, t: StakingTotals): void =>
  state.set(TOTALS, enc({ bonded: t.bonded, unbonding: t.unbonding, rewards_pool: t.rewards_pool }));

const activeCache = new WeakMap<Buffer, ActiveSet>();

function decodeActive(raw: Buffer): ActiveSet {
  let s = activeCache.get(raw);
  if (!s) {
    const o = dec(raw) as { epoch: number; members: Record<string, string>[] };
    s = {
      epoch: o.epoch,
      members: o.members.map((m) => ({ address: m.address, name: m.name, public_key: m.public_key, power: BigInt(m.power) })),
    };
    activeCache.set(raw, s);
  }
  return s;
}

/** The active set in force (sorted by address), or null while none was ever chosen (the genesis authorities act). */
export function getActiveSet(state: StateReader): ActiveSet | null {
  const raw = state.get(ACTIVE);
  return raw ? decodeActive(raw) : null;
}

/**
 * The active set in force at `height` (the one that proposed it and whose precommits certify it), read
 * from a state anywhere from the start of `height` to part way into `height + 1`. A set changed during
 * `height` (a jailing, a tombstone, an epoch's new set) takes effect at `height + 1`, so block
 * `height + 1`'s last_commit and its signing records are checked against the set before the change.
 */
export function activeSetInForceAt(state: StateReader, height: number): ActiveSet | null {
  const raw = state.get(activeBeforeChangeKey(height)) ?? state.get(activeBeforeChangeKey(height + 1)) ?? state.get(ACTIVE);
  return raw ? decodeActive(raw) : null;
}

/** The active set chosen for an epoch (history, for queries), or null. */
export function getActiveSetOf(state: StateReader, epoch: number): ActiveSet | null {
  const raw = state.get(activeHistoryKey(epoch));
  return raw ? decodeActive(raw) : null;
}

/**
 * Replace the active set. `height`: the block making the change (absent at genesis); the set in force at
 * that height is kept first (activeSetInForceAt), since the block was proposed and is certified by it.
 */
export function putActiveSet(state: StateOverlay, s: ActiveSet, height?: number): void {
  if (height !== undefined) {
    const before = state.get(ACTIVE);
    const key = activeBeforeChangeKey(height);
    if (before && !state.get(key)) state.set(key, before);
  }
  const members = [...s.members].sort((a, b) => (a.address < b.address ? -1 : 1));
  const raw = enc({ epoch: s.epoch, members });
  state.set(ACTIVE, raw);
  state.set(activeHistoryKey(s.epoch), raw);
}

/** PoA authorities added by the genesis admin (AddAuthority), or null: the genesis set. */
export function getPoaSet(state: StateReader): ActiveMember[] | null {
  const raw = state.get(POA_SET);
  return raw ? decodeActive(raw).members : null;
}

export const putPoaSet = (state: StateOverlay, members: ActiveMember[]): void =>
  state.set(POA_SET, enc({ epoch: 0, members: [...members].sort((a, b) => (a.address < b.address ? -1 : 1)) }));

export function getEpochStats(state: StateReader, epoch: number, v: string): EpochStats {
  const o = readJson(state, epochStatsKey(epoch, v));
  if (!o) return { blocks: 0, signed: 0, missed: 0, rewards: 0n, commission: 0n };
  return {
    blocks: o.blocks as number,
    signed: o.signed as number,
    missed: o.missed as number,
    rewards: big(o.rewards),
    commission: big(o.commission),
  };
}

export const putEpochStats = (state: StateOverlay, epoch: number, v: string, s: EpochStats): void =>
  state.set(
    epochStatsKey(epoch, v),
    enc({ blocks: s.blocks, signed: s.signed, missed: s.missed, rewards: s.rewards, commission: s.commission }),
  );

/** A validator's F1 ratio and cumulative commission (wei) at the end of an epoch (reward history). */
export interface EpochCheckpoint {
  acc: bigint;
  commission_total: bigint;
}

export function getCheckpoint(state: StateReader, v: string, epoch: number): EpochCheckpoint | null {
  const raw = state.get(ratioKey(v, epoch));
  if (!raw) return null;
  const [acc, commission] = raw.toString('utf8').split(':');
  return { acc: BigInt(acc), commission_total: BigInt(commission ?? '0') };
}

export const getRatio = (state: StateReader, v: string, epoch: number): bigint | null =>
  getCheckpoint(state, v, epoch)?.acc ?? null;

/** Value `acc:commission_total` (decimal). */
export const putCheckpoint = (state: StateOverlay, v: string, epoch: number, c: EpochCheckpoint): void =>
  state.set(ratioKey(v, epoch), Buffer.from(`${c.acc}:${c.commission_total}`, 'utf8'));

export function getSigningInfo(state: StateReader, v: string): SigningInfo {
  const o = readJson(state, signingKey(v));
  if (!o) return { count: 0, index: 0, bits: '', missed: 0, signed_total: 0, missed_total: 0 };
  return o as unknown as SigningInfo;
}

export const putSigningInfo = (state: StateOverlay, v: string, s: SigningInfo): void =>
  state.set(
    signingKey(v),
    enc({
      count: s.count,
      index: s.index,
      bits: s.bits,
      missed: s.missed,
      signed_total: s.signed_total,
      missed_total: s.missed_total,
    }),
  );

export interface UnbondingPool {
  tokens: bigint;
  shares: bigint;
}

export function getPool(state: StateReader, v: string, epoch: number): UnbondingPool {
  const o = readJson(state, unbondingPoolKey(v, epoch));
  return o ? { tokens: big(o.tokens), shares: big(o.shares) } : { tokens: 0n, shares: 0n };
}

export function putPool(state: StateOverlay, v: string, epoch: number, p: UnbondingPool): void {
  if (p.shares === 0n) state.delete(unbondingPoolKey(v, epoch));
  else state.set(unbondingPoolKey(v, epoch), enc({ tokens: p.tokens, shares: p.shares }));
}

export function getUnbondingShares(state: StateReader, d: string, v: string, epoch: number): bigint {
  const raw = state.get(unbondingKey(d, v, epoch));
  return raw ? BigInt(raw.toString('utf8')) : 0n;
}

export function putUnbondingShares(state: StateOverlay, d: string, v: string, epoch: number, shares: bigint): void {
  if (shares === 0n) state.delete(unbondingKey(d, v, epoch));
  else state.set(unbondingKey(d, v, epoch), Buffer.from(shares.toString(), 'utf8'));
}

export interface Redelegation {
  amount: bigint;
  complete_epoch: number;
}

export function getRedelegation(state: StateReader, d: string, from: string, to: string): Redelegation | null {
  const o = readJson(state, redelegationKey(d, from, to));
  return o ? { amount: big(o.amount), complete_epoch: o.complete_epoch as number } : null;
}

export const putRedelegation = (state: StateOverlay, d: string, from: string, to: string, r: Redelegation): void =>
  state.set(redelegationKey(d, from, to), enc({ amount: r.amount, complete_epoch: r.complete_epoch }));

/** Keys of a list kept in chunks (an append rewrites one chunk only): its length, and chunk c. */
export interface ChunkedListKeys {
  count: KeyStr;
  chunk: (c: number) => KeyStr;
}

/** Items per chunk of a chunked list. */
const LIST_CHUNK = 64;

export function listAppend(state: StateOverlay, keys: ChunkedListKeys, item: unknown): void {
  const raw = state.get(keys.count);
  const n = raw ? Number(raw.toString('utf8')) : 0;
  const ck = keys.chunk(Math.floor(n / LIST_CHUNK));
  const chunkRaw = state.get(ck);
  const chunk = chunkRaw ? (JSON.parse(chunkRaw.toString('utf8')) as unknown[]) : [];
  chunk.push(item);
  state.set(ck, enc(chunk));
  state.set(keys.count, Buffer.from(String(n + 1), 'utf8'));
}

export function listRead<T>(state: StateReader, keys: ChunkedListKeys): T[] {
  const raw = state.get(keys.count);
  if (!raw) return [];
  const n = Number(raw.toString('utf8'));
  const out: T[] = [];
  for (let c = 0; c * LIST_CHUNK < n; c++) {
    const chunk = state.get(keys.chunk(c));
    if (chunk) for (const item of JSON.parse(chunk.toString('utf8')) as T[]) out.push(item);
  }
  return out;
}

export function listDelete(state: StateOverlay, keys: ChunkedListKeys): void {
  const raw = state.get(keys.count);
  if (!raw) return;
  const n = Number(raw.toString('utf8'));
  for (let c = 0; c * LIST_CHUNK < n; c++) state.delete(keys.chunk(c));
  state.delete(keys.count);
}

const queueKeys = (epoch: number): ChunkedListKeys => ({
  count: queueCountKey(epoch),
  chunk: (c) => queueChunkKey(epoch, c),
});

export const queueAppend = (state: StateOverlay, epoch: number, d: string, v: string): void =>
  listAppend(state, queueKeys(epoch), [d, v]);

/** Take (and delete) every [delegator, validator] pair queued for an epoch. */
export function queueTake(state: StateOverlay, epoch: number): [string, string][] {
  const out = listRead<[string, string]>(state, queueKeys(epoch));
  listDelete(state, queueKeys(epoch));
  return out;
}

/** Parse a delegation key: [delegator, validator] or null. */
export function parseDelegationKey(k: KeyStr): [string, string] | null {
  if (k.length !== 41 || k.charCodeAt(0) !== STAKING_NS.delegation) return null;
  const b = Buffer.from(k, 'latin1');
  return [`0x${b.toString('hex', 1, 21)}`, `0x${b.toString('hex', 21, 41)}`];
}

/** Parse an unbonding entry key: [delegator, validator, complete_epoch] or null. */
export function parseUnbondingKey(k: KeyStr): [string, string, number] | null {
  if (k.length !== 49 || k.charCodeAt(0) !== STAKING_NS.unbonding) return null;
  const b = Buffer.from(k, 'latin1');
  return [`0x${b.toString('hex', 1, 21)}`, `0x${b.toString('hex', 21, 41)}`, Number(b.readBigUInt64BE(41))];
}
