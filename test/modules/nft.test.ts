import test from 'ava';
import { collectionAddress } from '../../ts/modules/nft/index.js';
import { ZERO_ADDRESS } from '../../ts/modules/index.js';
import { alice, bob } from '../helpers/chain-fixture.js';
import { carol, deployFields, invariantsHold, nftScenario } from '../helpers/nft.js';

test('DeployNft: the collection at SRC721_ + keccak(deployer, nonce), its fields, event and listing', async (t) => {
  const s = await nftScenario(t);
  const tx = s.op(alice, 'DeployNft', deployFields({ max_supply: 3 }));
  const r = await s.run(tx);
  t.is(r.status, 1);
  const address = collectionAddress(alice.address, tx.nonce);
  t.regex(address, /^SRC721_[0-9a-f]{40}$/);
  t.not(address, collectionAddress(alice.address, tx.nonce + 1n));
  t.deepEqual(r.events, [
    {
      type: 'CollectionDeployed',
      fields: { collection: address, deployer: alice.address, name: 'Punks', symbol: 'PNK', base_uri: 'ipfs://punks' },
    },
  ]);
  t.deepEqual(s.lists().collection(address), {
    address,
    name: 'Punks',
    symbol: 'PNK',
    max_supply: 3n,
    total_minted: 0n,
    total_burned: 0n,
    total_supply: 0n,
    holders: 0,
    deployer: alice.address,
    royalty_bps: 250,
    royalty_recipient: alice.address,
    base_uri: 'ipfs://punks',
    frozen: false,
    created_height: s.chain.height,
  });
  const second = await s.deploy({ name: 'Other', symbol: 'OTH' }, bob);
  t.deepEqual(
    s
      .lists()
      .collections(0, 10)
      .items.map((c) => c.address),
    [address, second],
  );
  await invariantsHold(t, s.chain);
});

test('DeployNft limits are 400s at admission: name 1-64, symbol 1-10 ASCII alphanumeric, royalty_bps <= 1000', async (t) => {
  const s = await nftScenario(t);
  await s.refused(alice, 'DeployNft', deployFields({ name: '' }), 'name must be a non-empty string');
  await s.refused(alice, 'DeployNft', deployFields({ name: 'x'.repeat(65) }), 'at most 64 characters');
  await s.refused(alice, 'DeployNft', deployFields({ symbol: 'ABCDEFGHIJK' }), 'symbol must be a non-empty string of at most 10');
  await s.refused(alice, 'DeployNft', deployFields({ symbol: 'PN-K' }), 'symbol must contain only ASCII letters and digits');
  await s.refused(alice, 'DeployNft', deployFields({ symbol: 'PÑK' }), 'symbol must contain only ASCII letters and digits');
  await s.refused(alice, 'DeployNft', deployFields({ royalty_bps: 1001 }), 'royalty_bps must be an integer from 0 to 1000');
  await s.refused(alice, 'DeployNft', deployFields({ max_supply: -1 }), 'max_supply must be an integer');
  await s.refused(alice, 'DeployNft', { ...deployFields(), extra: 1 }, 'unknown field extra');
  await s.refused(alice, 'DeployNft', deployFields({ base_uri: 'x'.repeat(513) }), 'base_uri must be a string of at most 512');
  await s.refused(alice, 'DeployNft', deployFields({ royalty_recipient: '0x12' }), 'royalty_recipient must be 0x + 40 hex');
  // The fee: 10x MIN_TX_FEE for a deploy.
  const cheap = s.op(alice, 'DeployNft', deployFields(), { fee: 10_000n });
  await t.throwsAsync(s.submit(cheap), { message: /fee must be at least 100000/ });
  t.is(s.lists().collections(0, 10).total, 0);
  t.is(await s.deploy({ name: 'x'.repeat(64), symbol: 'ABCDEFGHIJ', royalty_bps: 1000 }).then((a) => a.length), 47);
});

test('MintNft: automatic ids are total_minted + 1 skipping ids taken explicitly; explicit ids fail when taken', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  const m1 = await s.mint(c, bob.address);
  t.deepEqual(m1.events, [{ type: 'Minted', fields: { collection: c, token_id: '1', to: bob.address, minter: alice.address } }]);
  await s.mint(c, bob.address, { token_id: 3 });
  await s.mint(c, carol.address, { token_id: 4, token_uri_override: 'ar://four' });
  // total_minted = 3: automatic tries 4 (taken), gives 5; then total_minted = 4 -> 5 taken, 6.
  const m5 = await s.mint(c, bob.address);
  t.is(m5.events?.[0].fields.token_id, '5');
  const m6 = await s.mint(c, bob.address);
  t.is(m6.events?.[0].fields.token_id, '6');
  await s.refused(alice, 'MintNft', { collection: c, to: bob.address, token_id: 3 }, 'token id 3 already exists');
  await s.refused(alice, 'MintNft', { collection: c, to: bob.address, token_id: 0 }, 'token_id must be an integer from 1');
  await s.refused(alice, 'MintNft', { collection: c, to: ZERO_ADDRESS }, 'cannot mint to the zero address');
  await s.refused(alice, 'MintNft', { collection: c, to: bob.address, token_uri_override: 'u'.repeat(513) }, 'at most 512');
  const four = s.reads().token(c, 4n);
  t.is(four?.token_uri, 'ar://four');
  t.is(four?.owner, carol.address);
  t.is(s.reads().token(c, 1n)?.token_uri, 'ipfs://punks/1');
  t.is(s.reads().token(c, 2n), null, 'id 2 was never minted');
  t.is(s.reads().collection(c)?.total_minted, 5n);
  t.deepEqual(
    s
      .lists()
      .tokensOf(bob.address, 0, 10)
      .items.map((x) => x.token_id),
    [1n, 3n, 5n, 6n],
  );
  t.deepEqual(s.lists().collectionsOf(carol.address, 0, 10).items, [{ collection: c, token_count: 1 }]);
  t.deepEqual(s.lists().holders(c, 0, 10).items, [
    { address: bob.address, token_count: 4 },
    { address: carol.address, token_count: 1 },
  ]);
  // A burned id stays taken: never minted again, explicitly or automatically.
  await s.ok(bob, 'BurnNft', { collection: c, token_id: 6 });
  await s.refused(
    alice,
    'MintNft',
    { collection: c, to: bob.address, token_id: 6 },
    'token id 6 was burned and cannot be reused',
  );
  const next = await s.mint(c, bob.address);
  t.is(next.events?.[0].fields.token_id, '7');
  await invariantsHold(t, s.chain);
});

test('MintNft permissions and limits: deployer or its operator only, not after freeze, max_supply is a hard cap', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy({ max_supply: 3 });
  await s.refused(
    bob,
    'MintNft',
    { collection: c, to: bob.address },
    'only the collection deployer or an operator it approved may mint',
  );
  await s.refused(bob, 'MintNft', { collection: `SRC721_${'ab'.repeat(20)}`, to: bob.address }, 'unknown collection');
  await s.ok(alice, 'ApproveNftOperator', { collection: c, operator: bob.address, approved: true });
  const byOperator = await s.mint(c, carol.address, {}, bob);
  t.is(byOperator.events?.[0].fields.minter, bob.address);
  await s.mint(c, carol.address);
  await s.mint(c, carol.address);
  await s.refused(alice, 'MintNft', { collection: c, to: bob.address }, 'max supply reached: 3 tokens minted');
  // Burning does not free a slot under the cap: max_supply bounds tokens ever minted.
  await s.ok(carol, 'BurnNft', { collection: c, token_id: 1 });
  await s.refused(alice, 'MintNft', { collection: c, to: bob.address }, 'max supply reached');

  const open = await s.deploy({ name: 'Open', symbol: 'OPN' });
  await s.refused(bob, 'FreezeNftCollection', { collection: open }, 'only the collection deployer may freeze it');
  const frozen = await s.ok(alice, 'FreezeNftCollection', { collection: open });
  t.deepEqual(frozen.events, [{ type: 'CollectionFrozen', fields: { collection: open } }]);
  t.true(s.reads().collection(open)?.frozen);
  await s.refused(alice, 'MintNft', { collection: open, to: bob.address }, 'is frozen: no more tokens can be minted');
  await s.refused(alice, 'FreezeNftCollection', { collection: open }, 'is already frozen');
  await invariantsHold(t, s.chain);
});

test('TransferNft by owner, approved spender and operator; approvals cleared on transfer; strangers refused', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  for (let i = 0; i < 3; i++) await s.mint(c, alice.address);
  const tr = await s.ok(alice, 'TransferNft', { collection: c, token_id: 1, to: bob.address });
  t.deepEqual(tr.events, [
    { type: 'Transferred', fields: { collection: c, token_id: '1', from: alice.address, to: bob.address } },
  ]);
  t.is(s.reads().token(c, 1n)?.last_transfer_height, s.chain.height);
  await s.refused(carol, 'TransferNft', { collection: c, token_id: 1, to: carol.address }, 'not allowed');
  await s.refused(bob, 'TransferNft', { collection: c, token_id: 9, to: carol.address }, 'token 9 does not exist');
  await s.refused(bob, 'TransferNft', { collection: c, token_id: 1, to: ZERO_ADDRESS }, 'use BurnNft');

  // An approved spender moves the token once: the transfer clears the approval.
  const ap = await s.ok(bob, 'ApproveNft', { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 });
  t.deepEqual(ap.events, [
    {
      type: 'Approved',
      fields: { collection: c, token_id: '1', owner: bob.address, spender: carol.address, expiry_height: '0' },
    },
  ]);
  t.deepEqual(s.lists().approvalsOf(bob.address, 0, 10).items, [
    { collection: c, token_id: 1n, spender: carol.address, expiry_height: 0n },
  ]);
  await s.ok(carol, 'TransferNft', { collection: c, token_id: 1, to: alice.address });
  t.is(s.reads().token(c, 1n)?.owner, alice.address);
  t.is(s.reads().token(c, 1n)?.approval, null);
  t.is(s.lists().approvalsOf(bob.address, 0, 10).total, 0);
  await s.refused(carol, 'TransferNft', { collection: c, token_id: 1, to: carol.address }, 'not allowed');

  // An operator moves any of the owner's tokens in that collection, until revoked.
  const op = await s.ok(alice, 'ApproveNftOperator', { collection: c, operator: bob.address, approved: true });
  t.deepEqual(op.events, [
    { type: 'OperatorApprovalChanged', fields: { collection: c, owner: alice.address, operator: bob.address, approved: 'true' } },
  ]);
  t.deepEqual(s.lists().operatorsOf(alice.address, 0, 10).items, [{ collection: c, operator: bob.address }]);
  await s.ok(bob, 'TransferNft', { collection: c, token_id: 2, to: carol.address });
  await s.ok(alice, 'ApproveNftOperator', { collection: c, operator: bob.address, approved: false });
  t.is(s.lists().operatorsOf(alice.address, 0, 10).total, 0);
  await s.refused(bob, 'TransferNft', { collection: c, token_id: 3, to: bob.address }, 'not allowed');
  await s.refused(alice, 'ApproveNftOperator', { collection: c, operator: alice.address, approved: true }, 'its own operator');

  t.deepEqual(
    s
      .lists()
      .tokensOf(alice.address, 0, 10)
      .items.map((x) => x.token_id)
      .sort(),
    [1n, 3n],
  );
  t.deepEqual(s.lists().collectionsOf(bob.address, 0, 10).items, []);
  t.is(s.lists().collection(c)?.holders, 2);
  await invariantsHold(t, s.chain);
});

test('ApproveNft: expiry is lazy (never authorizes after expiry_height, reads hide it), revoke with "", owner-or-operator only', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  await s.mint(c, alice.address);
  await s.mint(c, alice.address);
  await s.refused(
    bob,
    'ApproveNft',
    { collection: c, token_id: 1, spender: bob.address, expiry_height: 0 },
    'only the owner or an operator',
  );
  await s.refused(
    alice,
    'ApproveNft',
    { collection: c, token_id: 1, spender: alice.address, expiry_height: 0 },
    'cannot be approved for its own',
  );
  const h = s.chain.height;
  await s.refused(
    alice,
    'ApproveNft',
    { collection: c, token_id: 1, spender: bob.address, expiry_height: h },
    'expiry_height must be 0',
  );
  // Valid through height h + 3.
  await s.ok(alice, 'ApproveNft', { collection: c, token_id: 1, spender: bob.address, expiry_height: h + 3 });
  t.is(s.reads().token(c, 1n)?.approval?.spender, bob.address);
  // Two more blocks: the next block is h + 4, past the expiry.
  await s.include([]);
  await s.include([]);
  t.is(s.chain.height, h + 3);
  t.is(s.reads().token(c, 1n)?.approval, null, 'reads hide an expired approval');
  t.is(s.lists().approvalsOf(alice.address, 0, 10).total, 0);
  await s.refused(bob, 'TransferNft', { collection: c, token_id: 1, to: bob.address }, 'not allowed');

  // Revoke: "" clears an approval (and is a harmless no-op when there is none).
  await s.ok(alice, 'ApproveNft', { collection: c, token_id: 2, spender: carol.address, expiry_height: 0 });
  const rv = await s.ok(alice, 'ApproveNft', { collection: c, token_id: 2, spender: '', expiry_height: 0 });
  t.is(rv.events?.[0].fields.spender, '');
  t.is(s.reads().token(c, 2n)?.approval, null);
  await s.refused(carol, 'TransferNft', { collection: c, token_id: 2, to: carol.address }, 'not allowed');
  // An operator of the owner may approve on its behalf.
  await s.ok(alice, 'ApproveNftOperator', { collection: c, operator: bob.address, approved: true });
  await s.ok(bob, 'ApproveNft', { collection: c, token_id: 2, spender: carol.address, expiry_height: 0 });
  t.deepEqual(
    s
      .lists()
      .approvalsOf(alice.address, 0, 10)
      .items.map((a) => a.token_id),
    [2n],
  );
  await invariantsHold(t, s.chain);
});

test('BurnNft by the owner only: the token is gone, its id taken, counters and lists updated', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  await s.mint(c, bob.address);
  await s.mint(c, bob.address);
  await s.ok(bob, 'ApproveNft', { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 });
  await s.refused(alice, 'BurnNft', { collection: c, token_id: 1 }, 'only the owner may burn');
  await s.refused(carol, 'BurnNft', { collection: c, token_id: 1 }, 'only the owner may burn');
  const b = await s.ok(bob, 'BurnNft', { collection: c, token_id: 1 });
  t.deepEqual(b.events, [{ type: 'Burned', fields: { collection: c, token_id: '1', owner: bob.address } }]);
  t.is(s.reads().token(c, 1n), null);
  t.true(s.reads().tokenEverMinted(c, 1n));
  const info = s.reads().collection(c);
  t.is(info?.total_burned, 1n);
  t.is(info?.total_supply, 1n);
  t.deepEqual(
    s
      .lists()
      .collectionTokens(c, 0, 10)
      .items.map((x) => x.token_id),
    [2n],
  );
  t.is(s.lists().approvalsOf(bob.address, 0, 10).total, 0);
  await s.refused(bob, 'BurnNft', { collection: c, token_id: 1 }, 'token 1 does not exist');
  await invariantsHold(t, s.chain);
});

test('UpdateNftBaseUri: deployer only, not once frozen; token URIs follow the base', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy({ base_uri: '' });
  await s.mint(c, bob.address);
  t.is(s.reads().token(c, 1n)?.token_uri, null, 'no base and no override: no URI');
  await s.refused(bob, 'UpdateNftBaseUri', { collection: c, base_uri: 'https://x/' }, 'only the collection deployer may update');
  const u = await s.ok(alice, 'UpdateNftBaseUri', { collection: c, base_uri: 'https://x/' });
  t.deepEqual(u.events, [{ type: 'BaseUriUpdated', fields: { collection: c, new_base_uri: 'https://x/' } }]);
  t.is(s.reads().token(c, 1n)?.token_uri, 'https://x/1');
  await s.ok(alice, 'FreezeNftCollection', { collection: c });
  await s.refused(alice, 'UpdateNftBaseUri', { collection: c, base_uri: 'https://y' }, 'its base URI can no longer change');
  t.is(s.reads().collection(c)?.base_uri, 'https://x/');
});
