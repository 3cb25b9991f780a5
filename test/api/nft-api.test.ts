import test from 'ava';
import { collectionAddress } from '../../ts/modules/index.js';
import { type SignedTransaction, signTransaction } from '../../ts/ledger/index.js';
import { type JsonResponse, type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { nftTx } from '../helpers/nft.js';
import { waitFor } from '../helpers/util.js';
import { CHAIN_ID, alice, assertMatchesSchema, bob, carol, dave, post, routeFor } from './rest-fixture.js';

const UNKNOWN = `SRC721_${'00'.repeat(20)}`;

const rpc = async (n: TestNode, method: string, params: unknown[]) =>
  (await post(n, '/rpc', { jsonrpc: '2.0', id: 1, method, params })).body;

async function confirmed(n: TestNode, txs: SignedTransaction[]): Promise<void> {
  for (const tx of txs) {
    await waitFor(
      async () => (await httpJson(`${n.url}/transactions/${tx.txid}`)).body?.status === 'confirmed',
      30_000,
      `inclusion of ${tx.txid}`,
    );
  }
}

/**
 * A node with one collection: alice deploys (POST /nft/submit) and mints 1 to bob (POST /transactions),
 * 10 to carol with its own URI (native_sendTransaction) and 3 (automatic) to bob; bob approves carol for
 * token 1, makes dave his operator and sends token 3 to carol.
 */
async function seeded(t: import('ava').ExecutionContext) {
  const n = await startTestNode();
  t.teardown(n.stop);
  const deploy = nftTx(alice, 0n, 'DeployNft', {
    name: 'Gallery',
    symbol: 'GAL',
    max_supply: 100,
    royalty_bps: 500,
    royalty_recipient: alice.address,
    base_uri: 'https://nft.example/meta',
  });
  const c = collectionAddress(alice.address, 0n);
  t.is((await post(n, '/nft/submit', { transaction: deploy })).status, 200);
  await confirmed(n, [deploy]);
  const mint1 = nftTx(alice, 1n, 'MintNft', { collection: c, to: bob.address });
  const mint10 = nftTx(alice, 2n, 'MintNft', { collection: c, to: carol.address, token_id: 10, token_uri_override: 'ar://ten' });
  const mint3 = nftTx(alice, 3n, 'MintNft', { collection: c, to: bob.address });
  t.deepEqual((await post(n, '/transactions', { transaction: mint1 })).body, {
    success: true,
    txid: mint1.txid,
    status: 'pending_in_mempool',
  });
  t.deepEqual((await rpc(n, 'native_sendTransaction', [mint10])).result, { txid: mint10.txid, status: 'pending_in_mempool' });
  t.is((await post(n, '/nft/submit', { transaction: mint3 })).status, 200);
  await confirmed(n, [mint1, mint10, mint3]);
  const approve = nftTx(bob, 0n, 'ApproveNft', { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 });
  const operator = nftTx(bob, 1n, 'ApproveNftOperator', { collection: c, operator: dave.address, approved: true });
  const transfer = nftTx(bob, 2n, 'TransferNft', { collection: c, token_id: 3, to: carol.address });
  for (const tx of [approve, operator, transfer]) t.is((await post(n, '/nft/submit', { transaction: tx })).status, 200);
  await confirmed(n, [approve, operator, transfer]);
  return { n, c, transfer };
}

/** GET a path, check the status, and the body against the route's schema on a 200. */
async function get(t: import('ava').ExecutionContext, n: TestNode, path: string, status = 200): Promise<JsonResponse> {
  const res = await httpJson(`${n.url}${path}`);
  t.is(res.status, status, `${path} -> ${res.status} ${res.text.slice(0, 200)}`);
  const template = path
    .split('?')[0]
    .split('/')
    .map((seg) => (/^(SRC721_|0x)/i.test(seg) || /^\d+$/.test(seg) ? '{p}' : seg))
    .join('/');
  if (status === 200) assertMatchesSchema(t, routeFor('GET', template), res, path);
  if (status === 404) t.is(res.text, '');
  return res;
}

test('the 11 NFT REST endpoints answer from the state and the event index; JSON-RPC answers agree', async (t) => {
  const { n, c, transfer } = await seeded(t);

  const cols = (await get(t, n, '/nft/collections')).body;
  t.is(cols.total, 1);
  t.is(cols.collections[0].address, c);
  const col = (await get(t, n, `/nft/collection/${c}`)).body;
  t.like(col, { address: c, name: 'Gallery', symbol: 'GAL', max_supply: 100, total_minted: 3, total_burned: 0, total_supply: 3 });
  t.like(col, { holders: 2, deployer: alice.address, royalty_bps: 500, frozen: false, base_uri: 'https://nft.example/meta' });
  t.deepEqual(
    (await get(t, n, `/nft/collection/${c.toUpperCase().replace('SRC721_', 'SRC721_')}`)).body,
    col,
    'hex case is free',
  );

  const tokens = (await get(t, n, `/nft/collection/${c}/tokens?limit=2`)).body;
  t.is(tokens.total, 3);
  t.deepEqual(
    tokens.tokens.map((x: any) => x.token_id),
    [1, 3],
  );
  t.deepEqual(
    (await get(t, n, `/nft/collection/${c}/tokens?limit=2&offset=2`)).body.tokens.map((x: any) => x.token_id),
    [10],
  );
  const holders = (await get(t, n, `/nft/collection/${c}/holders`)).body;
  t.deepEqual(holders.holders, [
    { address: carol.address, token_count: 2 },
    { address: bob.address, token_count: 1 },
  ]);
  const events = (await get(t, n, `/nft/collection/${c}/events`)).body;
  t.is(events.total, 4, 'three mints and a transfer (approvals are not collection events)');
  t.like(events.events[0], { type: 'Transferred', token_id: '3', from: bob.address, to: carol.address, txid: transfer.txid });
  t.is(events.events[3].type, 'Minted');
  t.deepEqual(
    (await get(t, n, `/nft/collection/${c}/events?limit=1&offset=3`)).body.events.map((e: any) => e.token_id),
    ['1'],
  );

  const token1 = (await get(t, n, `/nft/token/${c}/1`)).body;
  t.deepEqual(token1, {
    collection: c,
    token_id: 1,
    owner: bob.address,
    token_uri: 'https://nft.example/meta/1',
    token_uri_override: null,
    minted_height: token1.minted_height,
    last_transfer_height: token1.minted_height,
    approval: { spender: carol.address, expiry_height: 0 },
  });
  t.is((await get(t, n, `/nft/token/${c}/10`)).body.token_uri, 'ar://ten');
  const history = (await get(t, n, `/nft/token/${c}/1/history`)).body;
  t.deepEqual(
    history.events.map((e: any) => e.type),
    ['Approved', 'Minted'],
  );

  const owned = (await get(t, n, `/nft/address/${bob.address}`)).body;
  t.deepEqual(
    owned.tokens.map((x: any) => x.token_id),
    [1],
  );
  t.is((await get(t, n, `/nft/address/${carol.address}`)).body.total, 2);
  t.deepEqual((await get(t, n, `/nft/address/${carol.address}/collections`)).body.collections, [
    { collection: c, token_count: 2 },
  ]);
  t.deepEqual((await get(t, n, `/nft/address/${bob.address}/approvals`)).body.approvals, [
    { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 },
  ]);
  t.deepEqual((await get(t, n, `/nft/address/${bob.address}/operator-approvals`)).body.operator_approvals, [
    { collection: c, operator: dave.address },
  ]);
  t.is((await get(t, n, `/nft/address/${bob.address}/history`)).body.total, 5, 'two mints to bob, approve, operator, transfer');
  t.deepEqual((await get(t, n, `/nft/address/${dave.address.toUpperCase().replace('0X', '0x')}/approvals`)).body.approvals, []);

  // JSON-RPC: the same query functions, the same shapes.
  t.deepEqual((await rpc(n, 'native_nftCollection', [c])).result, col);
  t.deepEqual((await rpc(n, 'native_nftToken', [c, 1])).result, token1);
  t.deepEqual((await rpc(n, 'native_nftToken', [c, '1'])).result, token1);
  t.deepEqual((await rpc(n, 'native_nftToken', [c, '0x1'])).result, token1);
  t.is((await rpc(n, 'native_nftToken', [c, 2])).result, null);
  t.is((await rpc(n, 'native_nftCollection', [UNKNOWN])).result, null);
  t.deepEqual(
    (await rpc(n, 'native_nftTokensOf', [carol.address])).result,
    (await get(t, n, `/nft/address/${carol.address}`)).body.tokens,
  );
  t.deepEqual((await rpc(n, 'native_nftTokensOf', [carol.address, { offset: 1, limit: 1 }])).result, [
    (await get(t, n, `/nft/address/${carol.address}?offset=1&limit=1`)).body.tokens[0],
  ]);
  t.deepEqual((await rpc(n, 'native_nftCollectionsOf', [carol.address])).result, [{ collection: c, token_count: 2 }]);
  t.deepEqual((await rpc(n, 'native_nftCollectionsOf', [dave.address])).result, []);
  for (const [method, params] of [
    ['native_nftCollection', [`SRC20_${'ab'.repeat(20)}`]],
    ['native_nftToken', [c, -1]],
    ['native_nftToken', [c, '18446744073709551616']],
    ['native_nftToken', [c]],
    ['native_nftTokensOf', ['0x12']],
    ['native_nftTokensOf', [bob.address, { limit: 'x' }]],
  ] as [string, unknown[]][]) {
    t.is((await rpc(n, method, params)).error?.code, -32602, `${method} ${JSON.stringify(params)}`);
  }

  // native_traceTransaction works for NFT operations over JSON-RPC too.
  const trace = (await rpc(n, 'native_traceTransaction', [`0x${transfer.txid}`])).result;
  t.like(trace, { op: 'TransferNft', status: 1, collection: c, token_id: 3 });
});

test('NFT REST errors: 404 for unknown collections and tokens, 400 for malformed addresses and ids; admission 400s', async (t) => {
  const { n, c } = await seeded(t);
  for (const path of [
    `/nft/collection/${UNKNOWN}`,
    `/nft/collection/${UNKNOWN}/tokens`,
    `/nft/collection/${UNKNOWN}/holders`,
    `/nft/collection/${UNKNOWN}/events`,
    `/nft/token/${UNKNOWN}/1`,
    `/nft/token/${c}/2`,
    `/nft/token/${c}/0`,
    `/nft/token/${c}/2/history`,
  ]) {
    await get(t, n, path, 404);
  }
  for (const path of [
    `/nft/collection/SRC20_${'ab'.repeat(20)}`,
    '/nft/collection/SRC721_xyz',
    `/nft/collection/${c}/tokens?limit=abc`,
    `/nft/collection/${c}/tokens?offset=1&page=1`,
    `/nft/token/${c}/abc`,
    `/nft/token/${c}/-1`,
    `/nft/token/${c}/18446744073709551616`,
    `/nft/token/${c}/1.5/history`,
    '/nft/address/0x1234',
    '/nft/address/bob/collections',
    '/nft/address/0x1234/approvals',
    '/nft/address/0x1234/operator-approvals',
  ]) {
    const res = await httpJson(`${n.url}${path}`);
    t.is(res.status, 400, `${path} -> ${res.status}`);
    t.is(res.body?.success, false);
    t.is(typeof res.body?.error, 'string');
  }

  // A failure known at submission is a 400 with the module's reason; nothing enters the pool.
  const stranger = nftTx(dave, 0n, 'MintNft', { collection: c, to: dave.address });
  const refused = await post(n, '/nft/submit', { transaction: stranger });
  t.is(refused.status, 400);
  t.deepEqual(refused.body, {
    success: false,
    error: 'Invalid transaction: only the collection deployer or an operator it approved may mint',
  });
  const taken = nftTx(alice, 4n, 'MintNft', { collection: c, to: dave.address, token_id: 10 });
  t.regex((await post(n, '/transactions', { transaction: taken })).body.error, /token id 10 already exists/);
  t.is((await rpc(n, 'native_sendTransaction', [taken])).error?.code, -32603);
  const plain = signTransaction(
    { from: dave.address, to: bob.address, amount: 5n, fee: 10_000n, nonce: 0n, chain_id: CHAIN_ID },
    dave,
  );
  t.regex((await post(n, '/nft/submit', { transaction: plain })).body.error, /zero address with amount 0/);
  const token = signTransaction(
    {
      from: dave.address,
      to: `0x${'00'.repeat(20)}`,
      amount: 0n,
      fee: 10_000n,
      nonce: 0n,
      chain_id: CHAIN_ID,
      data: JSON.stringify({ Burn: { contract: `SRC20_${'ab'.repeat(20)}`, amount: 1 } }),
    },
    dave,
  );
  t.regex((await post(n, '/nft/submit', { transaction: token })).body.error, /not an NFT operation/);
  t.is((await httpJson(`${n.url}/mempool`)).body.size, 0);
});
