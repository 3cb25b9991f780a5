import test from 'ava';
import { collectionAddress } from '../../ts/modules/index.js';
import type { SignedTransaction } from '../../ts/ledger/index.js';
import { alice, bob, carol, dave, erin, post } from '../api/rest-fixture.js';
import { type ChildNode, spawnNode } from '../helpers/child-node.js';
import { httpJson } from '../helpers/node.js';
import { nftTx } from '../helpers/nft.js';
import { tempDir, waitFor } from '../helpers/util.js';

const asNode = (c: ChildNode) => ({ url: c.url }) as Parameters<typeof post>[0];

async function submitAll(n: ChildNode, txs: SignedTransaction[]): Promise<void> {
  for (const tx of txs) {
    const r = await post(asNode(n), '/nft/submit', { transaction: tx });
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  }
  for (const tx of txs) {
    await waitFor(
      async () => (await httpJson(`${n.url}/transactions/${tx.txid}`)).body?.status === 'confirmed',
      30_000,
      'inclusion',
    );
  }
}

test('NFT state survives kill -9: every NFT answer is the same after the restart, and /chain/validate replays it from genesis', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const args = ['--data-dir', tmp.dir, '--block-time-ms', '100', '--log-level', 'info'];
  const first = await spawnNode(args);
  t.teardown(() => {
    if (first.proc.exitCode === null) first.proc.kill('SIGKILL');
  });
  const c = collectionAddress(alice.address, 0n);
  const deploy = {
    name: 'Crash',
    symbol: 'CRSH',
    max_supply: 0,
    royalty_bps: 100,
    royalty_recipient: carol.address,
    base_uri: 'ipfs://crash',
  };
  await submitAll(first, [
    nftTx(alice, 0n, 'DeployNft', deploy),
    ...Array.from({ length: 6 }, (_, i) => nftTx(alice, BigInt(i + 1), 'MintNft', { collection: c, to: bob.address })),
    nftTx(alice, 7n, 'MintNft', { collection: c, to: carol.address, token_id: 100, token_uri_override: 'ar://100' }),
  ]);
  await submitAll(first, [
    nftTx(bob, 0n, 'TransferNft', { collection: c, token_id: 1, to: carol.address }),
    nftTx(bob, 1n, 'ApproveNft', { collection: c, token_id: 2, spender: dave.address, expiry_height: 0 }),
    nftTx(bob, 2n, 'ApproveNftOperator', { collection: c, operator: dave.address, approved: true }),
    nftTx(bob, 3n, 'BurnNft', { collection: c, token_id: 3 }),
    nftTx(alice, 8n, 'UpdateNftBaseUri', { collection: c, base_uri: 'ipfs://crash2/' }),
  ]);
  await submitAll(first, [
    nftTx(dave, 0n, 'TransferNft', { collection: c, token_id: 4, to: erin.address }),
    nftTx(carol, 0n, 'ApproveNft', { collection: c, token_id: 1, spender: erin.address, expiry_height: 1_000_000 }),
    nftTx(alice, 9n, 'FreezeNftCollection', { collection: c }),
  ]);
  await waitFor(async () => (await httpJson(`${first.url}/mempool`)).body?.size === 0, 30_000, 'empty mempool');

  const paths = [
    '/nft/collections',
    `/nft/collection/${c}`,
    `/nft/collection/${c}/tokens`,
    `/nft/collection/${c}/holders`,
    `/nft/collection/${c}/events`,
    ...[1, 2, 3, 4, 100].flatMap((id) => [`/nft/token/${c}/${id}`, `/nft/token/${c}/${id}/history`]),
    ...[alice, bob, carol, dave, erin].flatMap((k) => [
      `/nft/address/${k.address}`,
      `/nft/address/${k.address}/collections`,
      `/nft/address/${k.address}/approvals`,
      `/nft/address/${k.address}/operator-approvals`,
      `/nft/address/${k.address}/history`,
    ]),
  ];
  const before = new Map<string, string>();
  for (const p of paths) {
    const r = await httpJson(`${first.url}${p}`);
    before.set(p, `${r.status} ${r.text}`);
  }
  t.regex(before.get(`/nft/collection/${c}`) ?? '', /"frozen":true/);
  t.regex(before.get(`/nft/token/${c}/3`) ?? '', /^404/);
  first.proc.kill('SIGKILL');
  await first.exited;

  const second = await spawnNode(args);
  t.teardown(() => {
    if (second.proc.exitCode === null) second.proc.kill('SIGKILL');
  });
  for (const p of paths) {
    const r = await httpJson(`${second.url}${p}`);
    t.is(`${r.status} ${r.text}`, before.get(p) ?? '', p);
  }
  // Re-validation from genesis re-executes every NFT operation and checks every state root.
  const v = await httpJson(`${second.url}/chain/validate`);
  t.is(v.status, 200);
  t.true(v.body.valid, JSON.stringify(v.body));
  // And the module keeps working after the restart.
  const more = nftTx(carol, 1n, 'TransferNft', { collection: c, token_id: 100, to: bob.address });
  await submitAll(second, [more]);
  t.is((await httpJson(`${second.url}/nft/token/${c}/100`)).body.owner, bob.address);
  second.proc.kill('SIGTERM');
  t.is(await second.exited, 0);
});
