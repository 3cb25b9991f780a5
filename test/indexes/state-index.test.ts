/**
 * The disk-backed state index (indexes/state-index.ts) against a brute-force ordering computed from the
 * whole state: after random blocks (native transfers, and dev-chain writes of balances, token balances,
 * token records, delegations and unbondings, deletions and zero balances among them), after a rollback,
 * after a restart (tables used as they are), after a crash between the chain's write and the index's
 * (caught up from the change sets) and after a forced rebuild.
 */
import test, { type ExecutionContext } from 'ava';
import { httpStatusOf } from '../../ts/api/index.js';
import type { Chain } from '../../ts/chain/index.js';
import { encodeU128, parseTokenBalanceKey, parseTokenKey, tokenBalanceKey, tokenKey } from '../../ts/modules/index.js';
import { delegationKey, unbondingKey } from '../../ts/ledger/index.js';
import { type StateIndex, StateIndexBuildingError, openStateIndex, stateIndex, stopStateIndex } from '../../ts/indexes/index.js';
import { MARKER_KEY } from '../../ts/indexes/state-index-store.js';
import { accountKey, addressFromAccountKey, decodeAccount, encodeAccount, type StateChanges } from '../../ts/state/index.js';
import type { KvStore } from '../../ts/storage/index.js';
import { NOW, alice, openFixtureChain, proposerKey, transfer } from '../helpers/chain-fixture.js';
import { rng, tempDir } from '../helpers/util.js';

type Ranked = { address: string; balance: bigint }[];

interface View {
  top: Ranked;
  size: number;
  total: bigint;
  records: number;
  tokens: string[];
  holders: Record<string, { top: Ranked; size: number; total: bigint }>;
  tokensOf: Record<string, string[]>;
  delegators: Record<string, string[]>;
  unbonding: Record<string, [string, number][]>;
  balances: Record<string, bigint>;
}

const rankOrder = (a: { address: string; balance: bigint }, b: { address: string; balance: bigint }) =>
  a.balance > b.balance ? -1 : a.balance < b.balance ? 1 : a.address < b.address ? -1 : 1;

/** The answers computed from every entry of the state. */
function bruteForce(chain: Chain, ids: Ids): View {
  const accounts: Ranked = [];
  let records = 0;
  const tokens = new Set<string>();
  const holders = new Map<string, Ranked>();
  const delegators = new Map<string, string[]>();
  const unbonding = new Map<string, [string, number][]>();
  for (const [k, v] of chain.state.entries()) {
    const address = addressFromAccountKey(k);
    if (address) {
      records++;
      const balance = decodeAccount(v).balance;
      if (balance > 0n) accounts.push({ address, balance });
      continue;
    }
    const contract = parseTokenKey(k);
    if (contract) tokens.add(contract);
    const bal = parseTokenBalanceKey(k);
    if (bal && v.length === 16) {
      const amount = BigInt(`0x${v.toString('hex')}`);
      if (amount > 0n) holders.set(bal[0], [...(holders.get(bal[0]) ?? []), { address: bal[1], balance: amount }]);
    }
    if (k.charCodeAt(0) === 0x21 && k.length === 41) {
      const b = Buffer.from(k, 'latin1');
      const [d, val] = [`0x${b.toString('hex', 1, 21)}`, `0x${b.toString('hex', 21, 41)}`];
      delegators.set(val, [...(delegators.get(val) ?? []), d]);
    }
    if (k.charCodeAt(0) === 0x22 && k.length === 49) {
      const b = Buffer.from(k, 'latin1');
      const d = `0x${b.toString('hex', 1, 21)}`;
      unbonding.set(d, [...(unbonding.get(d) ?? []), [`0x${b.toString('hex', 21, 41)}`, Number(b.readBigUInt64BE(41))]]);
    }
  }
  const sum = (r: Ranked) => r.reduce((s, x) => s + x.balance, 0n);
  accounts.sort(rankOrder);
  return {
    top: accounts,
    size: accounts.length,
    total: sum(accounts),
    records,
    tokens: [...tokens].sort(),
    holders: Object.fromEntries(
      ids.contracts.map((c) => {
        const r = (holders.get(c) ?? []).sort(rankOrder);
        return [c, { top: r, size: r.length, total: sum(r) }];
      }),
    ),
    tokensOf: Object.fromEntries(
      ids.people.map((a) => [a, ids.contracts.filter((c) => holders.get(c)?.some((h) => h.address === a)).sort()]),
    ),
    delegators: Object.fromEntries(ids.people.map((v) => [v, (delegators.get(v) ?? []).sort()])),
    unbonding: Object.fromEntries(
      ids.people.map((d) => [d, (unbonding.get(d) ?? []).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))]),
    ),
    balances: Object.fromEntries(ids.people.map((a) => [a, accounts.find((x) => x.address === a)?.balance ?? 0n])),
  };
}

/** The same answers from the index. */
function indexed(idx: StateIndex, ids: Ids): View {
  const top = idx.accounts.top(1_000_000);
  return {
    top,
    size: idx.accounts.size,
    total: idx.accounts.total,
    records: idx.accountRecords,
    tokens: [...idx.tokens].sort(),
    holders: Object.fromEntries(
      ids.contracts.map((c) => {
        const r = idx.holdersOf(c);
        return [c, { top: r?.top(1_000_000) ?? [], size: r?.size ?? 0, total: r?.total ?? 0n }];
      }),
    ),
    tokensOf: Object.fromEntries(ids.people.map((a) => [a, idx.tokensOf(a)])),
    delegators: Object.fromEntries(ids.people.map((v) => [v, idx.delegatorsOf(v)])),
    unbonding: Object.fromEntries(ids.people.map((d) => [d, idx.unbondingOf(d)])),
    balances: Object.fromEntries(ids.people.map((a) => [a, idx.accounts.get(a)])),
  };
}

interface Ids {
  people: string[];
  contracts: string[];
}

const addr = (i: number) => `0x${(0xa0_0000 + i).toString(16).padStart(40, '0')}`;
const contractId = (i: number) => `SRC20_${(0xc0_0000 + i).toString(16).padStart(40, '0')}`;
/** Amounts with many ties and some beyond 2^64 (and 2^128 for native balances). */
const AMOUNTS = [0n, 1n, 7n, 7n, 10n ** 18n, 2n ** 70n, 2n ** 100n + 3n];

/** A random dev-chain write: each kind of indexed key, set, zeroed or deleted. */
function randomWrites(rand: () => number, ids: Ids, n: number): StateChanges {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const w: StateChanges = new Map();
  for (let i = 0; i < n; i++) {
    const del = rand() < 0.2;
    const kind = Math.floor(rand() * 5);
    if (kind === 0) {
      const balance = pick(AMOUNTS) * (rand() < 0.1 ? 2n ** 130n : 1n);
      w.set(accountKey(pick(ids.people)), del ? null : encodeAccount({ nonce: 0n, balance }));
    } else if (kind === 1) {
      w.set(tokenBalanceKey(pick(ids.contracts), pick(ids.people)), del ? null : encodeU128(pick(AMOUNTS)));
    } else if (kind === 2) w.set(tokenKey(pick(ids.contracts)), del ? null : Buffer.from('{}'));
    else if (kind === 3) w.set(delegationKey(pick(ids.people), pick(ids.people)), del ? null : Buffer.from([1]));
    else w.set(unbondingKey(pick(ids.people), pick(ids.people), Math.floor(rand() * 4)), del ? null : Buffer.from([1]));
  }
  return w;
}

async function block(chain: Chain, txs: Parameters<Chain['propose']>[0] = []): Promise<void> {
  await chain.commit(await chain.propose(txs, proposerKey(chain.params, chain.height + 1), NOW));
}

async function ready(chain: Chain): Promise<StateIndex> {
  return stateIndex({ chain });
}

function same(t: ExecutionContext, idx: StateIndex, chain: Chain, ids: Ids, what: string): void {
  t.deepEqual(indexed(idx, ids), bruteForce(chain, ids), what);
}

async function reopen(t: ExecutionContext, dir: string, fx: { chain: Chain; db: KvStore }) {
  await stopStateIndex(fx.chain);
  await fx.db.close();
  const next = await openFixtureChain(dir);
  t.teardown(() => next.db.close());
  return next;
}

test('the state index follows random blocks, a rollback, a restart, a catch-up and a rebuild', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const ids: Ids = { people: Array.from({ length: 30 }, (_, i) => addr(i)), contracts: [0, 1, 2].map(contractId) };
  const rand = rng(1010);
  let idx = await ready(fx.chain);
  same(t, idx, fx.chain, ids, 'genesis');
  let nonce = 0n;
  for (let b = 1; b <= 24; b++) {
    await fx.chain.writeDevState(randomWrites(rand, ids, 12));
    const txs = rand() < 0.5 ? [transfer(alice, nonce++, { to: ids.people[Math.floor(rand() * 30)], amount: 10n ** 15n })] : [];
    await block(fx.chain, txs);
    if (b % 4 === 0) same(t, await ready(fx.chain), fx.chain, ids, `block ${b}`);
  }
  const before = indexed(idx, ids);
  await fx.chain.rollbackTo(fx.chain.height - 6);
  idx = await ready(fx.chain);
  same(t, idx, fx.chain, ids, 'after a rollback of 6 blocks');
  t.notDeepEqual(indexed(idx, ids), before);

  // A clean restart: the tables are current and used as they are.
  fx = await reopen(t, tmp.dir, fx);
  idx = await openStateIndex(fx.chain);
  t.is(idx.startedFrom, 'disk');
  await idx.ready();
  const restarted = indexed(idx, ids);
  t.deepEqual(restarted, bruteForce(fx.chain, ids), 'after a restart');

  // Blocks the index did not follow (as if the node stopped between the chain's write and the index's).
  await stopStateIndex(fx.chain);
  for (let b = 0; b < 3; b++) {
    await fx.chain.writeDevState(randomWrites(rand, ids, 12));
    await block(fx.chain);
  }
  idx = await openStateIndex(fx.chain);
  t.is(idx.startedFrom, 'caught-up');
  same(t, await ready(fx.chain), fx.chain, ids, 'caught up from the change sets');

  // Without the marker the tables are rebuilt from the state: the same answers as the followed index.
  const followed = indexed(idx, ids);
  await stopStateIndex(fx.chain);
  await fx.db.write([{ type: 'del', key: MARKER_KEY }]);
  fx = await reopen(t, tmp.dir, fx);
  idx = await openStateIndex(fx.chain);
  t.is(idx.startedFrom, 'rebuilt');
  await idx.ready();
  t.deepEqual(indexed(idx, ids), followed, 'rebuilt equals followed');
  same(t, idx, fx.chain, ids, 'rebuilt');
});

test('pages of the rich list cross read chunks, and a rebuild runs while blocks are committed', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const ids: Ids = { people: Array.from({ length: 2_500 }, (_, i) => addr(i)), contracts: [contractId(0)] };
  const many: StateChanges = new Map();
  ids.people.forEach((a, i) => {
    many.set(accountKey(a), encodeAccount({ nonce: 0n, balance: BigInt(i % 700) }));
    many.set(tokenBalanceKey(ids.contracts[0], a), encodeU128(BigInt(i % 300)));
  });
  await fx.chain.writeDevState(many);
  await block(fx.chain);
  const brute = bruteForce(fx.chain, ids);
  const idx = await ready(fx.chain);
  for (const [offset, limit] of [
    [0, 5],
    [1020, 10],
    [1023, 2],
    [2040, 100],
    [brute.size - 3, 10],
    [brute.size + 5, 10],
  ]) {
    t.deepEqual(idx.accounts.top(limit, offset), brute.top.slice(offset, offset + limit), `rich list ${offset}+${limit}`);
    const holders = brute.holders[ids.contracts[0]].top;
    t.deepEqual(
      idx.holdersOf(ids.contracts[0])?.top(limit, offset),
      holders.slice(offset, offset + limit),
      `holders ${offset}+${limit}`,
    );
  }

  // A rebuild (no marker) with blocks committed while it streams the state.
  await stopStateIndex(fx.chain);
  await fx.db.write([{ type: 'del', key: MARKER_KEY }]);
  fx = await reopen(t, tmp.dir, fx);
  // Small chunks: the rebuild yields between them, and the blocks land meanwhile.
  const rebuilding = await openStateIndex(fx.chain, { buildChunk: 100 });
  // A query that will not wait is told the index is being rebuilt (503 / -32000 through every interface).
  const err = await t.throwsAsync(rebuilding.ready(0), { instanceOf: StateIndexBuildingError });
  t.is(err?.status, 'UNAVAILABLE');
  t.is(err && httpStatusOf(err), 503);
  const rand = rng(77);
  for (let b = 0; b < 3; b++) {
    await fx.chain.writeDevState(randomWrites(rand, ids, 50));
    await block(fx.chain);
  }
  same(t, await ready(fx.chain), fx.chain, ids, 'rebuilt while blocks were committed');
  t.is(rebuilding.startedFrom, 'rebuilt');
});

test('dev-chain writes pending at a restart are in the index, which is rebuilt at the next start', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const ids: Ids = { people: [addr(1), addr(2)], contracts: [contractId(1)] };
  await ready(fx.chain);
  await fx.chain.writeDevState(
    new Map([
      [accountKey(addr(1)), encodeAccount({ nonce: 0n, balance: 5n })],
      [tokenBalanceKey(ids.contracts[0], addr(2)), encodeU128(9n)],
    ]),
  );
  fx = await reopen(t, tmp.dir, fx);
  let idx = await ready(fx.chain);
  t.is(idx.accounts.get(addr(1)), 5n);
  t.deepEqual(idx.tokensOf(addr(2)), [ids.contracts[0]]);
  same(t, idx, fx.chain, ids, 'pending writes included');
  fx = await reopen(t, tmp.dir, fx);
  idx = await openStateIndex(fx.chain);
  t.is(idx.startedFrom, 'rebuilt');
  same(t, await ready(fx.chain), fx.chain, ids, 'rebuilt with the pending writes');
  // The next block carries the writes: the index is current again.
  await block(fx.chain);
  fx = await reopen(t, tmp.dir, fx);
  idx = await openStateIndex(fx.chain);
  t.is(idx.startedFrom, 'disk');
  same(t, await ready(fx.chain), fx.chain, ids, 'after the block');
});

test('malformed ids find nothing', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const idx = await ready(fx.chain);
  t.deepEqual(idx.tokensOf('0x12'), []);
  t.deepEqual(idx.delegatorsOf('nope'), []);
  t.deepEqual(idx.unbondingOf(''), []);
  t.is(idx.holdersOf('SRC20_zz'), undefined);
  t.is(idx.accounts.get('0x'), 0n);
  t.true(idx.accounts.get(alice.address) > 0n);
  await stopStateIndex(fx.chain);
});
