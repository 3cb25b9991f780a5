import test from 'ava';
import { sha256 } from '../../ts/crypto/index.js';
import type { KeyPair, SignedTransaction } from '../../ts/ledger/index.js';
import { rawCollection, tokenKey } from '../../ts/modules/nft/keys.js';
import { getAccount, keyBytes, verifyStateProof } from '../../ts/state/index.js';
import { alice, bob } from '../helpers/chain-fixture.js';
import { carol, deployFields, invariantsHold, nftInvariants, nftScenario, nftState } from '../helpers/nft.js';

test('a failure known only at inclusion is a failed transaction (status 0, reason in the receipt) with no NFT change', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  await s.mint(c, alice.address);
  await s.ok(alice, 'ApproveNft', { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 });
  // Both pass admission alone; in the block, alice's transfer runs first and clears carol's approval.
  const first = s.op(alice, 'TransferNft', { collection: c, token_id: 1, to: bob.address });
  const second = s.op(carol, 'TransferNft', { collection: c, token_id: 1, to: carol.address });
  await s.submit(first);
  await s.submit(second);
  const carolBefore = getAccount(s.chain.state, carol.address);
  const p = await s.produce();
  t.is(p.result.included.length, 2);
  t.is(p.result.receipts[0].status, 1);
  t.is(p.result.receipts[1].status, 0);
  t.regex(Buffer.from(p.result.receipts[1].output).toString('utf8'), /not allowed/);
  t.is(p.result.receipts[1].events, undefined);
  t.is(s.reads().token(c, 1n)?.owner, bob.address);
  const carolAfter = getAccount(s.chain.state, carol.address);
  t.is(carolAfter.nonce, carolBefore.nonce + 1n, 'the nonce is used');
  t.true(carolAfter.balance < carolBefore.balance, 'the fee is paid');

  // Every operation failing inside a block leaves the NFT state exactly as it was.
  const before = nftState(s.chain);
  const n = s.nonce(carol);
  const failing = [
    s.op(carol, 'MintNft', { collection: c, to: carol.address }, { nonce: n }),
    s.op(carol, 'TransferNft', { collection: c, token_id: 1, to: carol.address }, { nonce: n + 1n }),
    s.op(carol, 'BurnNft', { collection: c, token_id: 1 }, { nonce: n + 2n }),
    s.op(carol, 'ApproveNft', { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 }, { nonce: n + 3n }),
    s.op(carol, 'FreezeNftCollection', { collection: c }, { nonce: n + 4n }),
    s.op(carol, 'UpdateNftBaseUri', { collection: c, base_uri: 'x' }, { nonce: n + 5n }),
    s.op(
      carol,
      'ApproveNftOperator',
      { collection: `SRC721_${'00'.repeat(20)}`, operator: bob.address, approved: true },
      { nonce: n + 6n },
    ),
    s.op(carol, 'MintNft', { collection: c, to: carol.address, token_id: 1 }, { nonce: n + 7n }),
  ];
  const q = await s.include(failing);
  t.is(q.result.included.length, failing.length);
  t.deepEqual(
    q.result.receipts.map((r) => r.status),
    failing.map(() => 0),
  );
  t.deepEqual(nftState(s.chain), before);
  await invariantsHold(t, s.chain);
});

test('before the nft activation height every NFT operation is refused as not active, and a block with one is invalid', async (t) => {
  const s = await nftScenario(t, 5);
  const tx = s.op(alice, 'DeployNft', deployFields());
  await t.throwsAsync(s.submit(tx), { message: 'NFT operations are not active on this chain yet' });
  const p = await s.include([tx]);
  t.is(p.result.included.length, 0);
  t.regex(p.result.dropped[0].reason, /not active/);
  while (s.chain.height < 4) await s.include([]);
  const c = await s.deploy();
  t.truthy(s.reads().collection(c));
});

test('collections, tokens, approvals and operators are in the state root, with proofs', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  const rootAfterDeploy = s.chain.head.state_root;
  await s.mint(c, bob.address);
  t.not(s.chain.head.state_root, rootAfterDeploy);
  const key = keyBytes(tokenKey(rawCollection(c), 1n));
  const proof = s.chain.state.prove(key);
  t.truthy(proof);
  t.true(verifyStateProof(proof as NonNullable<typeof proof>, s.chain.head.state_root, sha256));
  // The proven value names bob as the owner (first 20 bytes of the token record).
  t.is(`0x${(proof?.value ?? '').slice(0, 40)}`, bob.address);
});

test('random sequences of operations keep every list consistent with the records', async (t) => {
  const s = await nftScenario(t);
  const keys = [alice, bob, carol];
  const cs = [await s.deploy(), await s.deploy({ name: 'B', symbol: 'B' }, bob)];
  let seed = 7;
  // mulberry32: a small PRNG whose low bits are as random as its high ones.
  const rnd = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const owners = () =>
    cs.flatMap((c) =>
      s
        .lists()
        .collectionTokens(c, 0, 1000)
        .items.map((x) => ({ c, id: x.token_id, owner: x.owner })),
    );
  for (let round = 0; round < 12; round++) {
    const txs: SignedTransaction[] = [];
    const next = new Map(keys.map((k) => [k.address, s.nonce(k)]));
    const sign = (k: KeyPair, name: string, f: Record<string, unknown>) => {
      const n = next.get(k.address) as bigint;
      next.set(k.address, n + 1n);
      txs.push(s.op(k, name, f, { nonce: n }));
    };
    const live = owners();
    for (let i = 0; i < 12; i++) {
      const k = keys[rnd(3)];
      const c = cs[rnd(2)];
      const tok = live.length ? live[rnd(live.length)] : null;
      const other = keys[rnd(3)].address;
      switch (rnd(6)) {
        case 0:
        case 1:
          sign(cs.indexOf(c) === 0 ? alice : bob, 'MintNft', { collection: c, to: other });
          break;
        case 2:
          if (tok)
            sign(keys.find((x) => x.address === tok.owner) ?? k, 'TransferNft', {
              collection: tok.c,
              token_id: tok.id,
              to: other,
            });
          break;
        case 3:
          if (tok) {
            // Mostly the owner (some by others, which fail); approving the owner itself revokes instead.
            const signer = rnd(4) === 0 ? k : (keys.find((x) => x.address === tok.owner) ?? k);
            sign(signer, 'ApproveNft', {
              collection: tok.c,
              token_id: tok.id,
              spender: other === tok.owner ? '' : other,
              expiry_height: 0,
            });
          }
          break;
        case 4:
          if (other !== k.address) sign(k, 'ApproveNftOperator', { collection: c, operator: other, approved: rnd(2) === 0 });
          break;
        case 5:
          if (tok) sign(keys.find((x) => x.address === tok.owner) ?? k, 'BurnNft', { collection: tok.c, token_id: tok.id });
          break;
      }
    }
    await s.include(txs);
    const bad = await nftInvariants(s.chain);
    if (bad.length) return t.fail(`round ${round}: ${bad.join('; ')}`);
  }
  t.true(owners().length > 0);
  await invariantsHold(t, s.chain);
});

test('a rollback of committed blocks puts the NFT state and its lists back as they were', async (t) => {
  const s = await nftScenario(t);
  const c = await s.deploy();
  await s.mint(c, bob.address);
  await s.ok(bob, 'ApproveNft', { collection: c, token_id: 1, spender: carol.address, expiry_height: 0 });
  const height = s.chain.height;
  const lists = () => ({
    bob: s.lists().tokensOf(bob.address, 0, 10),
    carol: s.lists().tokensOf(carol.address, 0, 10),
    holders: s.lists().holders(c, 0, 10),
    approvals: s.lists().approvalsOf(bob.address, 0, 10),
    collection: s.lists().collection(c),
  });
  const before = { state: nftState(s.chain), lists: lists() };
  await s.ok(bob, 'TransferNft', { collection: c, token_id: 1, to: carol.address });
  await s.mint(c, carol.address);
  await s.ok(alice, 'FreezeNftCollection', { collection: c });
  t.notDeepEqual(lists(), before.lists);
  await s.chain.rollbackTo(height);
  t.deepEqual(nftState(s.chain), before.state);
  await s.index(); // the index the node keeps, after the rollback
  t.deepEqual(lists(), before.lists);
  await invariantsHold(t, s.chain);
});
