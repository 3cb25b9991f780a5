import test from 'ava';
import { collectionAddress } from '../../ts/modules/index.js';
import type { SignedTransaction } from '../../ts/ledger/index.js';
import { traceNativeTransaction } from '../../ts/services/index.js';
import { stringifyExact } from '../../ts/util/index.js';
import { alice, bob } from '../helpers/chain-fixture.js';
import { nftChain } from '../helpers/nft.js';

// The longest base URI (512 characters), of 3-byte UTF-8 characters: the largest a trace can get.
const URI = `https://example.org/${'€'.repeat(490)}`;

test('native_traceTransaction of every NFT operation: pre and post state, status, events, fee split; at most ~5 KB', async (t) => {
  const s = await nftChain(t);
  const ctx = { chain: s.chain };
  const deploy = s.op(alice, 'DeployNft', {
    name: '€'.repeat(64),
    symbol: 'ART',
    max_supply: 0,
    royalty_bps: 1000,
    royalty_recipient: bob.address,
    base_uri: URI,
  });
  const c = collectionAddress(alice.address, deploy.nonce);
  await s.include([deploy]);
  const steps: [string, (n: bigint) => SignedTransaction][] = [
    ['mint', (n) => s.op(alice, 'MintNft', { collection: c, to: alice.address, token_uri_override: URI }, { nonce: n })],
    [
      'approve',
      (n) => s.op(alice, 'ApproveNft', { collection: c, token_id: 1, spender: bob.address, expiry_height: 0 }, { nonce: n }),
    ],
    [
      'operator',
      (n) => s.op(alice, 'ApproveNftOperator', { collection: c, operator: bob.address, approved: true }, { nonce: n }),
    ],
    ['transfer', (n) => s.op(alice, 'TransferNft', { collection: c, token_id: 1, to: bob.address }, { nonce: n })],
    ['base-uri', (n) => s.op(alice, 'UpdateNftBaseUri', { collection: c, base_uri: `${URI.slice(0, -1)}v` }, { nonce: n })],
    ['freeze', (n) => s.op(alice, 'FreezeNftCollection', { collection: c }, { nonce: n })],
    ['failing mint', (n) => s.op(alice, 'MintNft', { collection: c, to: alice.address }, { nonce: n })],
    ['burn', () => s.op(bob, 'BurnNft', { collection: c, token_id: 1 })],
  ];
  const txs = steps.map(([, make], i) => make(deploy.nonce + 1n + BigInt(i)));
  // The first block holds the mint; the rest in one block, so prefixes are re-applied before each trace.
  await s.include([txs[0]]);
  await s.include(txs.slice(1));
  const traces = new Map<string, Record<string, any>>();
  for (const [i, tx] of [deploy, ...txs].entries()) {
    const trace = (await traceNativeTransaction(ctx, tx.txid)) as Record<string, any>;
    const size = Buffer.byteLength(stringifyExact(trace));
    t.true(size <= 5 * 1024, `${trace.op} trace is ${size} bytes`);
    traces.set(i === 0 ? 'deploy' : steps[i - 1][0], trace);
    t.is(trace.txid, tx.txid);
    t.is(trace.collection, c);
    t.deepEqual(trace.fee_split, {
      burned_base: tx.fee - tx.fee / 2n,
      validator_base: tx.fee / 2n,
      validator: trace.fee_split.validator,
    });
    t.is(trace.post_state.sender.nonce, trace.pre_state.sender.nonce + 1n);
    t.is(trace.post_state.sender.balance_base, trace.pre_state.sender.balance_base - tx.fee);
  }
  const get = (k: string) => traces.get(k) as Record<string, any>;
  t.is(get('deploy').op, 'DeployNft');
  t.is(get('deploy').pre_state.collection, null);
  t.is(get('deploy').post_state.collection.total_minted, 0n);
  t.like(get('deploy').events[0], { type: 'CollectionDeployed', base_uri: URI });

  const mint = get('mint');
  t.is(mint.op, 'MintNft');
  t.is(mint.token_id, 1n);
  t.is(mint.pre_state.token, null);
  t.is(mint.post_state.token.owner, alice.address);
  t.is(mint.post_state.token.token_uri_override, URI);
  t.is(mint.pre_state.collection.total_minted, 0n);
  t.is(mint.post_state.collection.total_minted, 1n);

  t.is(get('approve').pre_state.token.approval, null);
  t.deepEqual(get('approve').post_state.token.approval, { spender: bob.address, expiry_height: 0n });
  t.false(get('operator').pre_state.operator_approved);
  t.true(get('operator').post_state.operator_approved);
  const transfer = get('transfer');
  t.is(transfer.pre_state.token.owner, alice.address);
  t.is(transfer.post_state.token.owner, bob.address);
  t.is(transfer.post_state.token.approval, null, 'the transfer cleared the approval');
  t.deepEqual(transfer.events, [{ type: 'Transferred', collection: c, token_id: '1', from: alice.address, to: bob.address }]);
  t.is(get('base-uri').pre_state.collection.base_uri, URI);
  t.deepEqual(get('base-uri').events, [{ type: 'BaseUriUpdated', collection: c, new_base_uri: `${URI.slice(0, -1)}v` }]);
  t.false(get('freeze').pre_state.collection.frozen);
  t.true(get('freeze').post_state.collection.frozen);

  const failed = get('failing mint');
  t.is(failed.status, 0);
  t.regex(failed.failure, /frozen/);
  t.deepEqual(failed.events, []);
  t.deepEqual(failed.post_state.collection, failed.pre_state.collection);

  const burn = get('burn');
  t.is(burn.status, 1);
  t.is(burn.pre_state.token.owner, bob.address);
  t.is(burn.post_state.token, null);
  t.is(burn.post_state.collection.total_burned, 1n);
});
