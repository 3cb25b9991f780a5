import test from 'ava';
import { EventIndex } from '../../ts/chain/index.js';
import { type ReceiptRecord, decodeReceipts, encodeReceipts, encodeReceiptsReference } from '../../ts/execution/index.js';
import { type NativeEvent, decodeEvents, encodeEvents, MIN_TX_FEE_BASE } from '../../ts/modules/index.js';
import { decodeOperation } from '../../ts/ledger/operations.js';
import { minimumFee } from '../../ts/ledger/rules.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { tempDir } from '../helpers/util.js';

const receipt = (events?: NativeEvent[], status: 0 | 1 = 1): ReceiptRecord => ({
  status,
  gasUsed: 21_000n,
  cumulativeGasUsed: 0n,
  effectiveGasPrice: 0n,
  type: 0,
  contractAddress: null,
  logs: [],
  output: status === 0 ? Buffer.from('insufficient token balance', 'utf8') : new Uint8Array(0),
  ...(events ? { events } : {}),
});

const transfer = (from: string, to: string, amount: string): NativeEvent => ({
  type: 'Transfer',
  fields: { contract: 'SRC20_00000000000000000000000000000000000000aa', from, to, amount },
});

test('receipts with native events encode like the RLP library and decode back', (t) => {
  const rs = [
    receipt([transfer('0x01', '0x02', '340282366920938463463374607431768211455'), { type: 'Näme ✓', fields: {} }]),
    receipt(undefined, 0),
    receipt([]),
  ];
  const enc = encodeReceipts(rs);
  t.deepEqual(Buffer.from(enc), Buffer.from(encodeReceiptsReference(rs)));
  const back = decodeReceipts(enc);
  t.deepEqual(back[0].events, rs[0].events);
  t.is(back[1].events, undefined);
  t.is(Buffer.from(back[1].output).toString('utf8'), 'insufficient token balance');
  t.deepEqual(decodeEvents(encodeEvents(rs[0].events ?? [])), rs[0].events);
});

test('a receipt without events encodes exactly as before native events existed (8 items)', (t) => {
  const plain = receipt();
  const withEmpty = receipt([]);
  t.deepEqual(Buffer.from(encodeReceipts([plain])), Buffer.from(encodeReceipts([withEmpty])));
});

test('the event index lists events per term newest first, with counts kept across reopen', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const terms = (e: NativeEvent) => [`addr:${e.fields.from}`, `addr:${e.fields.to}`, 'all'];
  let db = await openRocksStore(tmp.dir);
  let index = new EventIndex(db, terms);
  for (let h = 1; h <= 3; h++) {
    const { ops, applied } = index.ops(h, [receipt([transfer('0xa', '0xb', String(h))]), receipt([transfer('0xb', '0xb', '9')])]);
    await db.write(ops);
    applied();
  }
  t.is(index.count('all'), 6);
  t.is(index.count('addr:0xa'), 3);
  t.is(index.count('addr:0xb'), 6, 'a self-transfer is listed once under its address');
  const page = await index.list('addr:0xa', 1, 5);
  t.deepEqual(
    page.map((l) => [l.height, l.txIndex, l.eventIndex]),
    [
      [2, 0, 0],
      [1, 0, 0],
    ],
  );
  await db.close();
  db = await openRocksStore(tmp.dir);
  index = new EventIndex(db, terms);
  t.is(index.count('all'), 6);
  t.is(index.count('none'), 0);
  await db.close();
});

test('deep pages of a term read from checkpoints and stay exact as blocks are added and rolled back', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const db = await openRocksStore(tmp.dir);
  t.teardown(() => db.close());
  const index = new EventIndex(db, () => ['all']);
  let height = 0;
  const addBlocks = async (blocks: number, perBlock: number) => {
    for (let b = 0; b < blocks; b++) {
      height++;
      const { ops, applied } = index.ops(
        height,
        Array.from({ length: perBlock }, (_, i) => receipt([transfer('0xa', '0xb', `${height}.${i}`)])),
      );
      await db.write(ops);
      applied();
    }
  };
  /** Every location, newest first, from one plain read. */
  const all = async () => {
    const rows = await new EventIndex(db, () => ['all']).list('all', 0, 1_000_000);
    return rows.map((l) => `${l.height}/${l.txIndex}`);
  };
  const page = async (offset: number, limit: number) =>
    (await index.list('all', offset, limit)).map((l) => `${l.height}/${l.txIndex}`);
  await addBlocks(30, 100);
  let expected = await all();
  t.is(expected.length, 3000);
  // The first deep read walks from the newest entry and remembers checkpoints; later ones start from them.
  for (const offset of [2500, 600, 1999, 2975, 513, 2999, 3000])
    t.deepEqual(await page(offset, 25), expected.slice(offset, offset + 25), `offset ${offset}`);
  // New events come after the newest: positions counted from the oldest keep their keys.
  await addBlocks(3, 77);
  expected = await all();
  for (const offset of [700, 1500, 3200, 3230])
    t.deepEqual(await page(offset, 40), expected.slice(offset, offset + 40), `offset ${offset} after new blocks`);
  // A rollback removes the newest events (and the term's checkpoints); pages stay exact.
  const dropped = Array.from({ length: 5 }, (_, i) => ({
    height: height - i,
    receipts: Array.from({ length: height - i > 30 ? 77 : 100 }, () => receipt([transfer('0xa', '0xb', '0')])),
  }));
  const { ops, applied } = index.dropOps(dropped);
  await db.write(ops);
  applied();
  height -= 5;
  expected = await all();
  t.is(expected.length, 2800);
  for (const offset of [600, 1000, 2775])
    t.deepEqual(await page(offset, 25), expected.slice(offset, offset + 25), `offset ${offset} after the rollback`);
  await addBlocks(2, 50);
  expected = await all();
  for (const offset of [650, 2800])
    t.deepEqual(await page(offset, 25), expected.slice(offset, offset + 25), `offset ${offset} after a rollback and new blocks`);
});

test('minimum fees follow the operation table (deploys 10x, NFT approvals 0.5x, freeze 1x)', (t) => {
  const fee = (data: string) => minimumFee({ kind: 'nft', op: decodeOperation(data) } as never);
  const c = `SRC721_${'ab'.repeat(20)}`;
  t.is(fee(`{"FreezeNftCollection":{"collection":"${c}"}}`), MIN_TX_FEE_BASE);
  t.is(
    fee(`{"ApproveNftOperator":{"collection":"${c}","operator":"0x${'11'.repeat(20)}","approved":true}}`),
    MIN_TX_FEE_BASE / 2n,
  );
  const deploy = decodeOperation('{"Deploy":{"name":"T","symbol":"T","decimals":2,"supply":5,"max_supply":0}}');
  t.is(minimumFee({ kind: 'token', op: deploy }), 10n * MIN_TX_FEE_BASE);
  t.is(minimumFee({ kind: 'transfer' }), MIN_TX_FEE_BASE);
});

test('short event values (ASCII by table, the rest as UTF-8) encode like the RLP library', (t) => {
  const values = [
    '',
    '0',
    '7',
    '\u007f',
    '\u0080',
    'é',
    '✓',
    '12345',
    'true',
    'ipfs://x/1',
    'a'.repeat(39),
    `x${'é'.repeat(30)}`,
  ];
  const rs = [receipt(values.map((v, i) => ({ type: `E${i}`, fields: { v, [`k${v}`]: v } })))];
  t.deepEqual(Buffer.from(encodeReceipts(rs)), Buffer.from(encodeReceiptsReference(rs)));
  t.deepEqual(decodeReceipts(encodeReceipts(rs))[0].events, rs[0].events);
});
