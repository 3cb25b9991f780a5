import test from 'ava';
import { AUDIT_LOG_MAX_ENTRIES, type AuditEntry, AuditLog, redactConfig } from '../../ts/services/index.js';
import { openRocksStore, P } from '../../ts/storage/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

const KEY = 'audit-test-key-0123456789';

async function rows(dir: string): Promise<number> {
  const db = await openRocksStore(dir);
  try {
    return (await db.range({ gte: Buffer.from([P.audit]), lt: Buffer.from([P.audit + 1]) })).length;
  } finally {
    await db.close();
  }
}

test('spec: the audit log keeps 10,000 entries', (t) => {
  t.is(AUDIT_LOG_MAX_ENTRIES, 10_000);
});

test('AuditLog: rolling window, newest first, limit/offset, trimmed on disk, continues after reopen', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let db = await openRocksStore(tmp.dir);
  let log = await AuditLog.open(db, { maxEntries: 10 });
  for (let i = 1; i <= 25; i++) log.record(i % 2 ? 'admin_action' : 'auth_failure', { i });
  const page = await log.list(100);
  t.is(page.total, 10);
  t.deepEqual(
    page.entries.map((e) => e.seq),
    [25, 24, 23, 22, 21, 20, 19, 18, 17, 16],
  );
  t.deepEqual(page.entries[0].detail, { i: 25 });
  t.is(page.entries[0].kind, 'admin_action');
  t.true(Math.abs(page.entries[0].time - Date.now() / 1000) < 60);
  t.deepEqual(
    (await log.list(3, 2)).entries.map((e) => e.seq),
    [23, 22, 21],
  );
  t.deepEqual((await log.list(5, 50)).entries, []);
  await log.close();
  t.is(log.record('config', {}).seq, 26, 'records after close are dropped');
  await db.close();
  t.is(await rows(tmp.dir), 10);

  db = await openRocksStore(tmp.dir);
  log = await AuditLog.open(db, { maxEntries: 10 });
  t.is(log.total, 10);
  t.is(log.record('config', { again: true }).seq, 26);
  t.deepEqual(
    (await log.list(2)).entries.map((e) => e.seq),
    [26, 25],
  );
  await log.close();
  await db.close();

  // A lower limit trims at open.
  db = await openRocksStore(tmp.dir);
  log = await AuditLog.open(db, { maxEntries: 4 });
  t.deepEqual(
    (await log.list(100)).entries.map((e) => e.seq),
    [26, 25, 24, 23],
  );
  await log.close();
  await db.close();
  t.is(await rows(tmp.dir), 4);
});

test('AuditLog: oversized, bigint and cyclic details are stored safely; write failures are reported', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const db = await openRocksStore(tmp.dir);
  t.teardown(() => db.close());
  const log = await AuditLog.open(db);
  log.record('admin_action', { amount: 2n ** 70n });
  log.record('admin_action', { blob: 'x'.repeat(100_000) });
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  log.record('admin_action', cyclic);
  const { entries } = await log.list();
  t.is(entries[2].detail.amount, 2n ** 70n);
  t.is(entries[1].detail.truncated, true);
  t.true(JSON.stringify(entries[1]).length < 5000);
  t.is(entries[0].detail.unserializable, true);
  await log.close();

  const errors: unknown[] = [];
  const failing = await AuditLog.open(
    { ...db, write: () => Promise.reject(new Error('disk full')) },
    { onError: (e) => errors.push(e) },
  );
  failing.record('config', {});
  await failing.flush();
  t.is(errors.length, 1);
});

test('redactConfig: secrets never reach the log', (t) => {
  const out = redactConfig({
    apiKey: KEY,
    apiHost: '0.0.0.0',
    corsOrigin: undefined,
    adminPrivateKey: 'abc',
    rateLimitGlobal: 60,
  });
  t.deepEqual(out, { apiKey: '[redacted]', apiHost: '0.0.0.0', adminPrivateKey: '[redacted]', rateLimitGlobal: 60 });
});

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] GET /admin/log: key-checked, config + auth failures, newest first, persisted across a restart`, async (t) => {
    const data = tempDir();
    t.teardown(data.cleanup);
    const start = () => startTestNode({ httpBackend: backend, apiKey: KEY, dataDir: data.dir, blockTimeMs: 60_000 });
    const n1 = await start();
    t.teardown(n1.stop); // idempotent
    t.truthy(n1.node.ctx.audit, 'the audit log is on the NodeContext for admin handlers');
    t.is((await fetch(`${n1.url}/admin/log`)).status, 401);
    t.is((await fetch(`${n1.url}/admin/log`, { headers: { 'x-api-key': 'wrong-key-wrong-key' } })).status, 401);
    const get = (url: string, query = '') => httpJson(`${url}/admin/log${query}`, { headers: { 'x-api-key': KEY } });
    const first = await get(n1.url);
    t.is(first.status, 200);
    t.is(first.body.total, 3);
    const entries = first.body.entries as AuditEntry[];
    t.deepEqual(
      entries.map((e) => [e.seq, e.kind]),
      [
        [3, 'auth_failure'],
        [2, 'auth_failure'],
        [1, 'config'],
      ],
    );
    t.deepEqual(entries[0].detail, { ip: '127.0.0.1', method: 'GET', path: '/admin/log', reason: 'wrong' });
    t.is(entries[1].detail.reason, 'missing');
    t.is(entries[2].detail.apiKey, '[redacted]');
    t.is(entries[2].detail.api_key_set, true);
    t.is(entries[2].detail.rateLimitWrite, n1.node.config.rateLimitWrite);
    t.false(first.text.includes(KEY));
    t.deepEqual(
      (await get(n1.url, '?limit=1')).body.entries.map((e: AuditEntry) => e.seq),
      [3],
    );
    t.is((await get(n1.url, '?limit=x')).status, 400);
    await n1.stop(); // the data dir is this test's: it stays

    const n2 = await start();
    t.teardown(n2.stop);
    const after = await get(n2.url);
    t.is(after.body.total, 4);
    t.deepEqual(
      after.body.entries.map((e: AuditEntry) => [e.seq, e.kind]),
      [
        [4, 'config'],
        [3, 'auth_failure'],
        [2, 'auth_failure'],
        [1, 'config'],
      ],
    );
  });
}
