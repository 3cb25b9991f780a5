import test from 'ava';
import { validateChain } from '../../ts/chain/index.js';
import { sha256 } from '../../ts/crypto/index.js';
import { TOKEN_EVENTS, getToken, tokenBalance, tokenBalanceKey, tokenContractAddress } from '../../ts/ledger/tokens/index.js';
import { getAccount, keyBytes, verifyStateProof } from '../../ts/state/index.js';
import { ZERO_ADDRESS } from '../../ts/ledger/units.js';
import { alice, bob, openFixtureChain, proposerKey, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

const op = (key: typeof alice, nonce: bigint, body: unknown, fee = 10_000n) =>
  transfer(key, nonce, { to: ZERO_ADDRESS, amount: 0n, fee, data: JSON.stringify(body) });

test('contract addresses derive from the deployer and its nonce', (t) => {
  const a = tokenContractAddress(alice.address, 0n);
  t.regex(a, /^SRC20_[0-9a-f]{40}$/);
  t.not(a, tokenContractAddress(alice.address, 1n));
  t.not(a, tokenContractAddress(bob.address, 0n));
  t.is(a, tokenContractAddress(alice.address, 0n));
});

test('token operations in blocks: a failure at inclusion is status 0 with its reason, fee and nonce only; state is provable and survives reopen and replay', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openFixtureChain(tmp.dir);
  const contract = tokenContractAddress(alice.address, 0n);
  const txs = [
    op(
      alice,
      0n,
      {
        Deploy: { name: 'Silver', symbol: 'SLV', decimals: 6, supply: '340282366920938463463374607431768211455', max_supply: 0 },
      },
      100_000n,
    ),
    op(alice, 1n, { Transfer: { contract, to: bob.address, amount: 1_000 } }),
    // Included but failing: bob holds 1000.
    op(bob, 0n, { Transfer: { contract, to: alice.address, amount: 1_001 } }),
    op(bob, 1n, { Burn: { contract, amount: 400 } }),
    op(alice, 2n, { Mint: { contract, to: bob.address, amount: 401 } }),
  ];
  const bobBefore = getAccount(chain.state, bob.address);
  const p = await chain.propose(txs, proposerKey(chain.params, 1), chain.now());
  await chain.commit(p);
  t.deepEqual(
    p.result.receipts.map((r) => r.status),
    [1, 1, 0, 1, 0],
  );
  t.is(
    Buffer.from(p.result.receipts[2].output).toString('utf8'),
    `insufficient token balance: ${bob.address} holds 1000, 1001 needed`,
  );
  t.is(Buffer.from(p.result.receipts[4].output).toString('utf8'), 'mint exceeds the u128 supply limit');
  t.deepEqual(p.result.receipts[1].events, [
    { type: TOKEN_EVENTS.transfer, fields: { contract, from: alice.address, to: bob.address, amount: '1000' } },
  ]);
  t.is(p.result.receipts[2].events, undefined);
  const bobAfter = getAccount(chain.state, bob.address);
  t.is(bobAfter.nonce, bobBefore.nonce + 2n, 'the failed operation used its nonce');
  t.is(bobBefore.balance - bobAfter.balance, 20_000n * 10_000_000_000n, 'both fees paid');
  t.is(tokenBalance(chain.state, contract, bob.address), 600n);
  t.is(getToken(chain.state, contract)?.supply, (1n << 128n) - 1n - 400n);

  // Token balances are in the state root: a proof of bob's balance verifies against the header.
  const proof = chain.state.prove(keyBytes(tokenBalanceKey(contract, bob.address)));
  t.truthy(proof);
  t.true(verifyStateProof(proof as NonNullable<typeof proof>, chain.head.state_root, sha256));

  // Reopen from disk (state rebuilt and checked against the head's root) and replay from genesis.
  await db.close();
  ({ chain, db } = await openFixtureChain(tmp.dir));
  t.is(tokenBalance(chain.state, contract, bob.address), 600n);
  t.like(await validateChain(chain), { valid: true, checked_blocks: 2 });
  await db.close();
});
