import test from 'ava';
import { encodeJustification } from '../../ts/chain/index.js';
import type { Block } from '../../ts/services/index.js';
import { commitCertificate } from '../../ts/explorer/read-model.js';
import { barChart, shareChart } from '../../ts/explorer/charts.js';
import { coins, coinsWei, int, percent, short, time, tokenAmount } from '../../ts/explorer/format.js';
import { pagingParams } from '../../ts/explorer/params.js';
import { formatUnits, groupThousands } from '../../ts/util/index.js';

test('amounts: units, thousands separators and every digit (beyond 2^53)', (t) => {
  t.is(coins(1_000_150_000_000n), '10,001.5 NATIVE');
  t.is(coins(1n), '0.00000001 NATIVE');
  t.is(coins(0n), '0 NATIVE');
  t.is(coinsWei(1n), '0.000000000000000001 NATIVE');
  t.is(coinsWei(123_456_789_012_345_678_901_234_567n), '123,456,789.012345678901234567 NATIVE');
  t.is(tokenAmount(2n ** 128n - 1n, 18, 'BIG'), '340,282,366,920,938,463,463.374607431768211455 BIG');
  t.is(tokenAmount(1500n, 0, 'T'), '1,500 T');
  t.is(formatUnits(-1234567n, 3), '-1,234.567');
  t.is(groupThousands(1234567), '1,234,567');
  t.is(int(999), '999');
  t.is(percent(12.3456789), '12.3457%');
  t.is(short('0x1234567890abcdef1234567890abcdef12345678', 8), '0x123456…345678');
});

test('times: relative to the render time, absolute UTC for the tooltip', (t) => {
  const now = Date.UTC(2026, 0, 2, 3, 4, 5);
  const s = now / 1000;
  t.deepEqual(time(s, now), { rel: 'just now', abs: '2026-01-02 03:04:05 UTC', iso: '2026-01-02T03:04:05.000Z' });
  t.is(time(s - 59, now).rel, '59 s ago');
  t.is(time(s - 3 * 60 - 10, now).rel, '3 min ago');
  t.is(time(s - 2 * 86_400, now).rel, '2 d ago');
  t.is(time(s + 30, now).rel, 'in 30 s');
});

test('paging: 1-based pages, bounded limit and depth, 400 otherwise', (t) => {
  const q = (s: string) => new URLSearchParams(s);
  t.deepEqual(pagingParams(q(''), 25), { page: 1, limit: 25, offset: 0 });
  t.deepEqual(pagingParams(q('page=3&limit=10'), 25), { page: 3, limit: 10, offset: 20 });
  for (const bad of ['page=0', 'page=-1', 'page=1.5', 'limit=0', 'limit=101', 'limit=x', 'page=401&limit=25'])
    t.throws(() => pagingParams(q(bad), 25), { message: /page|limit|deep/ }, bad);
});

test('charts: bars scaled to the largest value inside the view box, labels never crowded, shares summing to 100%', (t) => {
  const c = barChart(
    'c',
    Array.from({ length: 14 }, (_, i) => ({ label: `d${i}`, value: i * 10 })),
  );
  t.is(c.bars.length, 14);
  t.false(c.empty);
  const tallest = c.bars[13];
  t.true(tallest.y >= 0 && tallest.y + tallest.h <= c.height);
  t.is(c.bars[0].h, 0);
  t.true(c.labels.length <= 8);
  t.is(c.labels.at(-1)?.text, 'd13');
  for (let i = 1; i < c.labels.length; i++) t.true(c.labels[i].x - c.labels[i - 1].x >= 40, 'labels apart');
  t.true(barChart('e', []).empty);
  const s = shareChart('s', [
    { label: 'a', pct: 50 },
    { label: 'b', pct: 30 },
  ]);
  t.deepEqual(
    s.segments.map((x) => [x.label, x.share]),
    [
      ['a', '50%'],
      ['b', '30%'],
      ['others', '20%'],
    ],
  );
  t.is(Math.round(s.segments.reduce((n, x) => n + x.w, 0)), s.width);
});

test('commit certificates: round and signers of a BFT justification, malformed bytes reported, none for PoA', (t) => {
  const signer = `0x${'ab'.repeat(20)}`;
  const bytes = encodeJustification({ round: 2, precommits: [{ validator: signer, signature: 'cd'.repeat(64) }] });
  t.deepEqual(commitCertificate({ justification: bytes } as Block), { round: 2, signers: [signer] });
  t.is(commitCertificate({ justification: new Uint8Array([0xc1, 0x05]) } as Block), 'malformed');
  t.is(commitCertificate({ justification: new Uint8Array(0) } as Block), null);
});
