import test from 'ava';
import { httpJson, startUnstakedDevNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import { alice, bob, carol, dave, erin, seedTransfers, submitAndConfirm, transfer } from './rest-fixture.js';

/** (block_index, tx_index) strictly decreasing: newest first. */
const newestFirst = (txs: { block_index: number; tx_index: number }[]): boolean =>
  txs.every(
    (tx, i) =>
      i === 0 ||
      txs[i - 1].block_index > tx.block_index ||
      (txs[i - 1].block_index === tx.block_index && txs[i - 1].tx_index > tx.tx_index),
  );

test('history, recent transactions, blocks and rich list paginate as specified', async (t) => {
  // Without a bonded validator: every coin is then in an account the rich list can show.
  const n = await startUnstakedDevNode();
  t.teardown(n.stop);
  const seeded = await submitAndConfirm(n, [
    ...seedTransfers(),
    // Three more from alice, in a later block: alice has 8 transactions in all (4 + 3 sent, 1 received).
    ...[4n, 5n, 6n].map((nonce) => transfer(alice, erin.address, nonce)),
  ]);
  const get = async (path: string) => {
    const r = await httpJson(`${n.url}${path}`);
    t.is(r.status, 200, `${path}: ${r.text.slice(0, 200)}`);
    return r.body;
  };
  const aliceTxids = new Set(
    seeded.filter((tx) => tx.from_address === alice.address || tx.to_address === alice.address).map((tx) => tx.txid),
  );
  t.is(aliceTxids.size, 8);

  // /accounts/{a}/history: page (0-based) + limit.
  const pages = [];
  for (let page = 0; page < 4; page++) pages.push(await get(`/accounts/${alice.address}/history?page=${page}&limit=3`));
  t.deepEqual(
    pages.map((p) => p.transactions.length),
    [3, 3, 2, 0],
  );
  for (const p of pages) t.like(p, { address: alice.address, total: 8, limit: 3 });
  t.deepEqual(
    pages.map((p) => p.offset),
    [0, 3, 6, 9],
  );
  const all = pages.flatMap((p) => p.transactions);
  t.deepEqual(all.map((tx: any) => tx.txid).sort(), [...aliceTxids].sort(), 'pages partition the history');
  t.true(newestFirst(all), 'newest first');
  t.true(
    all.every((tx: any) => tx.status === 'confirmed' && typeof tx.block_timestamp === 'number' && tx.block_hash.length === 64),
  );
  const dir = Object.fromEntries(all.map((tx: any) => [tx.txid, tx.direction]));
  t.is(dir[seeded[0].txid], 'out');
  t.is(dir[seeded[3].txid], 'self');
  t.is(dir[seeded[4].txid], 'in');
  // Default limit 20; /address/{a}/history with limit + offset (and page) gives the same rows.
  const whole = await get(`/accounts/${alice.address}/history`);
  t.is(whole.limit, 20);
  t.deepEqual(
    whole.transactions.map((tx: any) => tx.txid),
    all.map((tx: any) => tx.txid),
  );
  const byOffset = await get(`/address/${alice.address}/history?limit=3&offset=2`);
  t.deepEqual(
    byOffset.transactions.map((tx: any) => tx.txid),
    all.slice(2, 5).map((tx: any) => tx.txid),
  );
  const byPage = await get(`/address/${alice.address}/history?limit=3&page=1`);
  t.deepEqual(
    byPage.transactions.map((tx: any) => tx.txid),
    all.slice(3, 6).map((tx: any) => tx.txid),
  );
  t.is((await get(`/address/${alice.address}/history?limit=1000`)).limit, 100, 'limit clamped to 100');
  t.deepEqual((await get(`/address/${dave.address}/history`)).transactions.length, 1);
  const stranger = `0x${'12'.repeat(20)}`;
  t.like(await get(`/address/${stranger}/history`), { transactions: [], total: 0 });

  // GET /transactions: newest first over all senders, limit + offset or page, next_offset.
  const recent = await get('/transactions?limit=100');
  t.is(recent.transactions.length, seeded.length);
  t.true(newestFirst(recent.transactions));
  t.is(recent.next_offset, null);
  t.deepEqual(recent.transactions.map((tx: any) => tx.txid).sort(), seeded.map((tx) => tx.txid).sort());
  const first = await get('/transactions?limit=4');
  t.is(first.next_offset, 4);
  const second = await get('/transactions?limit=4&offset=4');
  const secondByPage = await get('/transactions?limit=4&page=1');
  t.deepEqual(second.transactions, secondByPage.transactions);
  t.is(second.next_offset, 8);
  const third = await get('/transactions?limit=4&offset=8');
  t.is(third.transactions.length, 2);
  t.is(third.next_offset, null);
  t.deepEqual(
    [...first.transactions, ...second.transactions, ...third.transactions].map((tx: any) => tx.txid),
    recent.transactions.map((tx: any) => tx.txid),
  );
  t.is((await get('/transactions')).limit, 20);

  // Blocks: newest first, page + limit, limit capped at 100.
  // Blocks keep coming: each page is checked against the total it reports.
  await waitFor(async () => (await get('/chain/info')).height >= 4, 30_000, 'four blocks');
  for (const [path, page] of [
    ['/chain/blocks?limit=2&page=0', 0],
    ['/blocks?limit=2&page=1', 1],
  ] as const) {
    const b = await get(path);
    t.deepEqual(
      b.blocks.map((x: any) => x.index),
      [b.total - 1 - page * 2, b.total - 2 - page * 2],
    );
  }
  t.is((await get('/chain/blocks?limit=500')).limit, 100);
  t.deepEqual((await get('/chain/blocks?page=999999&limit=100')).blocks, []);

  // Rich list: descending balances, ranks, shares of the circulating supply.
  // A block between two reads changes balances and shares (its reward): take a rich list and a top-2 list
  // read with no block between them (the rich list read again equals the first).
  let rich: any;
  let top2: any;
  await waitFor(
    async () => {
      rich = await get('/richlist');
      top2 = await get('/accounts/top?limit=2');
      return JSON.stringify(await get('/richlist')) === JSON.stringify(rich);
    },
    30_000,
    'a rich list and a top-2 list of one head',
  );
  const balances = rich.holders.map((h: any) => BigInt(h.balance));
  t.true(balances.every((b: bigint, i: number) => i === 0 || balances[i - 1] >= b));
  t.deepEqual(
    rich.holders.map((h: any) => h.rank),
    rich.holders.map((_: unknown, i: number) => i + 1),
  );
  const sum = balances.reduce((s: bigint, b: bigint) => s + b, 0n);
  t.is(sum, BigInt(rich.circulating_supply), 'every coin is held by a listed account');
  const pct = rich.holders.reduce((s: number, h: any) => s + h.percentage, 0);
  t.true(Math.abs(pct - 100) < 0.001, `percentages sum to 100 (${pct})`);
  t.true(rich.total_accounts >= 11);
  t.deepEqual(top2.holders, rich.holders.slice(0, 2));
  const erinRow = rich.holders.find((h: any) => h.address === erin.address);
  t.is(BigInt(erinRow.balance), BigInt((await get(`/accounts/${erin.address}/balance`)).balance));

  // Epoch history: limit default 10, clamped to 100; no completed epoch on a young chain.
  t.like(await get('/epoch/history'), { limit: 10, epochs: [] });
  t.is((await get('/epoch/history?limit=1000')).limit, 100);

  // Wallet summary reflects the history.
  const w = await get(`/wallets/${alice.address}`);
  t.like(w, { tx_count: 8, nonce: 7, pending_nonce: 7 });
  t.is(w.summary.last_transaction.txid, all[0].txid);
  t.is(w.summary.first_transaction.txid, all[all.length - 1].txid);
  // New addresses today (UTC): every address of the seed transacted for the first time.
  const stats = await get('/stats/daily');
  const news = stats.days.reduce((s: number, d: any) => s + (d.new_addresses ?? 0), 0);
  t.is(news, new Set([alice, bob, carol, dave, erin].map((k) => k.address)).size);
});
