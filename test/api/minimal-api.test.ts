import test from 'ava';
import { DEV_MNEMONIC, keyPairFromMnemonic, type SignedTransaction, signTransaction, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { stringifyExact } from '../../ts/util/index.js';
import { httpJson, startTestNode, startUnstakedDevNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
const bob = keyPairFromMnemonic(DEV_MNEMONIC, 1);
const carol = keyPairFromMnemonic(DEV_MNEMONIC, 2);

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] transfer lifecycle: accepted, in mempool, included, balances and fee split exact`, async (t) => {
    // An unstaked validator keeps the coinbase (a new dev chain's staked one sends it to the treasury).
    const n = await startUnstakedDevNode({ httpBackend: backend });
    t.teardown(n.stop);
    t.is(n.node.http.backend, backend);
    const health = await httpJson(`${n.url}/health`);
    t.deepEqual(health.body, { status: 'ok', node: 'native-node-dev' });
    // The head's consensus: the genesis block says PoA; every produced block on dev says DPoS (one validator,
    // no BFT justification). Read once a block exists (a loaded machine may answer before the first one).
    const status = await waitFor(
      async () => {
        const r = await httpJson(`${n.url}/native_status`);
        return r.body.sync_info?.latest_block_height >= 1 ? r : null;
      },
      30_000,
      'a first block',
    );
    t.is(status.body.chain_id, 7120);
    t.is(status.body.consensus, 'DPoS');
    const before = (await httpJson(`${n.url}/accounts/${alice.address}/balance`)).body.balance;
    t.is(BigInt(before), 10_000n * BASE_PER_COIN);
    const tx = signTransaction(
      { from: alice.address, to: carol.address, amount: 123_456_789n, fee: 20_001n, nonce: 0n, chain_id: 7120 },
      alice,
    );
    const res = await httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: tx } });
    t.is(res.status, 200, res.text);
    t.deepEqual(res.body, { success: true, txid: tx.txid, status: 'pending_in_mempool' });
    const confirmed = await waitFor(async () => {
      const r = await httpJson(`${n.url}/transactions/0x${tx.txid}`);
      return r.body?.status === 'confirmed' ? r.body : null;
    });
    t.is(confirmed.amount, 123_456_789);
    const block = await httpJson(`${n.url}/chain/blocks/${confirmed.block_index}`);
    t.is(block.body.transactions[0].txid, tx.txid);
    const carolBal = await httpJson(`${n.url}/accounts/${carol.address}/balance`);
    t.is(BigInt(carolBal.body.balance), 10_000n * BASE_PER_COIN + 123_456_789n);
    const aliceBal = await httpJson(`${n.url}/accounts/${alice.address}/balance`);
    t.is(BigInt(aliceBal.body.balance), 10_000n * BASE_PER_COIN - 123_456_789n - 20_001n);
    const nonce = await httpJson(`${n.url}/accounts/${alice.address}/nonce`);
    t.is(nonce.body.nonce, 1);
    // The proposer got floor(fee/2) plus block rewards: its balance is a multiple of the reward plus 10000.
    const validator = block.body.validator as string;
    const vb = BigInt((await httpJson(`${n.url}/accounts/${validator}/balance`)).body.balance);
    t.is(vb % (2n * BASE_PER_COIN), 10_000n);
    const blocks = await httpJson(`${n.url}/chain/blocks?limit=2`);
    t.is(blocks.body.blocks.length, 2);
    t.true(blocks.body.blocks[0].index > blocks.body.blocks[1].index);
    t.is((await httpJson(`${n.url}/blocks/0`)).body.index, 0);
    t.is((await fetch(`${n.url}/transactions/${'ab'.repeat(32)}`)).status, 404);
    t.is((await fetch(`${n.url}/nope`)).status, 404);
  });

  test(`[${backend}] every rejection returns 400 with the spec message and leaves state and pool unchanged`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, blockTimeMs: 60_000, maxPerSender: 2 });
    t.teardown(n.stop);
    const post = (tx: unknown) => httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: tx } });
    const mk = (o: Partial<Parameters<typeof signTransaction>[0]> = {}, key = bob): SignedTransaction =>
      signTransaction(
        { from: key.address, to: carol.address, amount: 1000n, fee: 10_000n, nonce: 0n, chain_id: 7120, ...o },
        key,
      );
    const cases: [string, unknown, RegExp][] = [
      ['amount 0', mk({ amount: 0n }), /^Invalid transaction: amount must be > 0 \(unless token\/EVM operation\)$/],
      ['wrong nonce', mk({ nonce: 5n }), /^Invalid nonce: expected 0, got 5$/],
      ['fee below minimum', mk({ fee: 9_999n }), /fee must be at least 10000/],
      ['wrong chain', mk({ chain_id: 7119 }), /wrong chain_id/],
      ['bad txid', { ...mk(), txid: 'ab'.repeat(32) }, /txid does not match/],
      ['bad signature', { ...mk(), signature: mk({ amount: 2n }).signature }, /signature verification failed/],
      [
        'key of another account',
        { ...mk(), public_key: Buffer.from(alice.publicKey).toString('hex') },
        /public_key does not derive/,
      ],
      ['insufficient balance', mk({ amount: 20_000n * BASE_PER_COIN }), /insufficient balance/],
      ['amount above u64', { ...mk(), amount: 2n ** 64n }, /amount must be/],
      ['string amount', { ...mk(), amount: '1000' }, /amount must be/],
      ['missing field', (({ fee, ...rest }) => rest)(mk()), /missing field fee/],
    ];
    for (const [name, tx, msg] of cases) {
      const r = await post(tx);
      t.is(r.status, 400, name);
      t.is(r.body?.success, false, name);
      t.regex(String(r.body?.error), msg, name);
    }
    t.is((await httpJson(`${n.url}/mempool`)).body.size, 0);
    // Per-sender limit (configured to 2 here).
    t.is((await post(mk({ nonce: 0n }))).status, 200);
    t.is((await post(mk({ nonce: 1n }))).status, 200);
    const limited = await post(mk({ nonce: 2n }));
    t.is(limited.status, 400);
    t.is(limited.body.error, 'Invalid transaction: too many pending transactions from this sender');
    const pool = await httpJson(`${n.url}/mempool`);
    t.is(pool.body.size, 2);
    t.is((await httpJson(`${n.url}/accounts/${bob.address}/nonce`)).body.nonce, 0);
  });

  test(`[${backend}] malformed bodies get 4xx, never a crash`, async (t) => {
    const n = await startTestNode({ httpBackend: backend });
    t.teardown(n.stop);
    const raw = (body: string | Buffer) =>
      fetch(`${n.url}/transactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const body of [
      '{',
      'null',
      '[]',
      '"x"',
      '{"transaction": 5}',
      '{"transaction": {"amount": 1e400}}',
      '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
      '{"transaction":{"amount":123456789012345678901234567890}}',
      '',
    ]) {
      const r = await raw(body);
      t.true(r.status >= 400 && r.status < 500, `${body.slice(0, 20)} -> ${r.status}`);
      const text = await r.text();
      t.notThrows(() => JSON.parse(text));
    }
    const big = await raw(Buffer.alloc(1024 * 1024 + 10, 0x20));
    t.is(big.status, 413);
    t.is((await fetch(`${n.url}/accounts/0x123/balance`)).status, 400);
    t.is((await fetch(`${n.url}/chain/blocks?limit=abc`)).status, 400);
    t.is((await fetch(`${n.url}/chain/blocks/abc`)).status, 400);
    t.is((await fetch(`${n.url}/chain/blocks/99999999`)).status, 404);
    t.is((await httpJson(`${n.url}/health`)).status, 200);
  });
}

test('API key: POST /transactions needs X-API-Key when set; reads stay public', async (t) => {
  const key = 'k'.repeat(20);
  const n = await startTestNode({ apiKey: key });
  t.teardown(n.stop);
  const tx = signTransaction(
    { from: alice.address, to: bob.address, amount: 1n, fee: 10_000n, nonce: 0n, chain_id: 7120 },
    alice,
  );
  const body = stringifyExact({ transaction: tx });
  const no = await fetch(`${n.url}/transactions`, { method: 'POST', body });
  t.is(no.status, 401);
  t.is(await no.text(), '');
  const wrong = await fetch(`${n.url}/transactions`, { method: 'POST', body, headers: { 'x-api-key': 'x'.repeat(20) } });
  t.is(wrong.status, 401);
  const ok = await fetch(`${n.url}/transactions`, { method: 'POST', body, headers: { 'x-api-key': key } });
  t.is(ok.status, 200);
  t.is((await fetch(`${n.url}/mempool`)).status, 200);
});
