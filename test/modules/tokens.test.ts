import test from 'ava';
import { validateChain } from '../../ts/chain/index.js';
import { sha256 } from '../../ts/crypto/index.js';
import { invariantViolations } from '../../ts/ledger/index.js';
import { OperationFailed, ZERO_ADDRESS } from '../../ts/modules/index.js';
import {
  InsufficientAllowance,
  InsufficientTokenBalance,
  MaxSupplyExceeded,
  NotTokenOwner,
  UnknownToken,
} from '../../ts/modules/tokens/errors.js';
import {
  TOKEN_EVENTS,
  getToken,
  encodeU128,
  putTokenBalance,
  tokenBalance,
  tokenBalanceKey,
  tokenContractAddress,
  tokensModule,
} from '../../ts/modules/tokens/index.js';
import { StateOverlay, StateStore, getAccount, keyBytes, verifyStateProof } from '../../ts/state/index.js';
import { alice, bob, openFixtureChain, proposerKey, transfer, validatorKeys } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';
import { applyDirect } from './direct-call.js';

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
  t.deepEqual(invariantViolations(chain.state), [], 'every module invariant holds after the block');
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
  t.deepEqual(invariantViolations(chain.state), []);
  t.like(await validateChain(chain), { valid: true, checked_blocks: 2 });
  await db.close();
});

test('a token lifecycle over several blocks keeps every invariant after each block; failures carry their stable codes in the receipts reasons', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir);
  t.teardown(() => db.close());
  const contract = tokenContractAddress(alice.address, 0n);
  const blocks = [
    [op(alice, 0n, { Deploy: { name: 'Gold', symbol: 'GLD', decimals: 2, supply: 1_000, max_supply: 1_500 } }, 100_000n)],
    [
      op(alice, 1n, { Approve: { contract, spender: bob.address, amount: 300 } }),
      op(bob, 0n, { TransferFrom: { contract, from: alice.address, to: bob.address, amount: 200 } }),
      op(bob, 1n, { TransferFrom: { contract, from: alice.address, to: bob.address, amount: 101 } }),
    ],
    [
      op(alice, 2n, { Mint: { contract, to: alice.address, amount: 500 } }),
      op(alice, 3n, { Mint: { contract, to: alice.address, amount: 1 } }),
      op(bob, 2n, { Mint: { contract, to: bob.address, amount: 1 } }),
      op(bob, 3n, { Burn: { contract, amount: 200 } }),
    ],
  ];
  const statuses: number[][] = [];
  const reasons: string[] = [];
  for (const [i, txs] of blocks.entries()) {
    const p = await chain.propose(txs, proposerKey(chain.params, i + 1), chain.now());
    await chain.commit(p);
    t.deepEqual(invariantViolations(chain.state), [], `invariants after block ${i + 1}`);
    statuses.push(p.result.receipts.map((r) => r.status));
    for (const r of p.result.receipts) if (r.status === 0) reasons.push(Buffer.from(r.output).toString('utf8'));
  }
  t.deepEqual(statuses, [[1], [1, 1, 0], [1, 0, 0, 1]]);
  t.deepEqual(reasons, [
    `insufficient allowance: ${alice.address} approved 100 to ${bob.address}, 101 needed`,
    'mint exceeds max_supply: supply 1500 + 1 > 1500',
    `only the deployer ${alice.address} may mint ${contract}`,
  ]);
  t.is(getToken(chain.state, contract)?.supply, 1_300n);
  t.is(tokenBalance(chain.state, contract, bob.address), 0n);
});

const applyToken = (state: StateOverlay, from: string, nonce: bigint, name: string, fields: Record<string, bigint | string>) =>
  applyDirect(tokensModule, state, from, nonce, name, fields);

test('each failure is its own OperationFailed subclass with a stable tokens/ code', (t) => {
  const state = new StateOverlay(new StateStore());
  const contract = tokenContractAddress(alice.address, 0n);
  const unknown = t.throws(() => applyToken(state, alice.address, 1n, 'Transfer', { contract, to: bob.address, amount: 1n }), {
    instanceOf: UnknownToken,
  });
  t.true(unknown instanceof OperationFailed);
  t.is(unknown.code, 'tokens/unknown_token');
  t.is(unknown.message, `unknown token contract ${contract}`);
  applyToken(state, alice.address, 0n, 'Deploy', { name: 'T', symbol: 'T', decimals: 0n, supply: 10n, max_supply: 10n });
  t.is(
    t.throws(() => applyToken(state, bob.address, 0n, 'Burn', { contract, amount: 1n }), { instanceOf: InsufficientTokenBalance })
      .code,
    'tokens/insufficient_balance',
  );
  t.is(
    t.throws(
      () => applyToken(state, bob.address, 0n, 'TransferFrom', { contract, from: alice.address, to: bob.address, amount: 1n }),
      {
        instanceOf: InsufficientAllowance,
      },
    ).code,
    'tokens/insufficient_allowance',
  );
  t.is(
    t.throws(() => applyToken(state, bob.address, 0n, 'Mint', { contract, to: bob.address, amount: 1n }), {
      instanceOf: NotTokenOwner,
    }).code,
    'tokens/not_owner',
  );
  t.is(
    t.throws(() => applyToken(state, alice.address, 1n, 'Mint', { contract, to: bob.address, amount: 1n }), {
      instanceOf: MaxSupplyExceeded,
    }).code,
    'tokens/max_supply_exceeded',
  );
});

test('the supply invariant names a token whose balances do not add up to its supply, and a wrong holder count', (t) => {
  const store = new StateStore();
  const state = new StateOverlay(store);
  applyToken(state, alice.address, 0n, 'Deploy', { name: 'T', symbol: 'T', decimals: 0n, supply: 10n, max_supply: 0n });
  applyToken(state, alice.address, 1n, 'Transfer', {
    contract: tokenContractAddress(alice.address, 0n),
    to: bob.address,
    amount: 4n,
  });
  store.applyChanges(state.changes);
  t.deepEqual(
    tokensModule.invariants.flatMap((i) => i.check(store)),
    [],
  );
  // A balance written around the handlers (as a bug would): supply and holder count no longer agree.
  const broken = new StateOverlay(store);
  const contract = tokenContractAddress(alice.address, 0n);
  broken.set(tokenBalanceKey(contract, validatorKeys[0].address), Buffer.from('00000000000000000000000000000005', 'hex'));
  store.applyChanges(broken.changes);
  t.deepEqual(
    tokensModule.invariants.flatMap((i) => i.check(store)),
    [`${contract}: supply 10, balances sum to 15`, `${contract}: 2 holders counted, 3 non-zero balances`],
  );
  // Through putTokenBalance (which keeps the count), only the supply disagrees.
  const viaHelper = new StateOverlay(store);
  putTokenBalance(viaHelper, contract, validatorKeys[0].address, 5n, 0n);
  store.applyChanges(viaHelper.changes);
  t.deepEqual(invariantViolations(store), [`tokens/supply-equals-balances: ${contract}: 1 holders counted, 2 non-zero balances`]);
});

test('/chain/validate answers rule "invariant" when every block checks but a module invariant fails on the replayed state', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir);
  t.teardown(() => db.close());
  const contract = tokenContractAddress(alice.address, 0n);
  const deploy = op(alice, 0n, { Deploy: { name: 'T', symbol: 'T', decimals: 0, supply: 10, max_supply: 0 } }, 100_000n);
  await chain.commit(await chain.propose([deploy], proposerKey(chain.params, 1), chain.now()));
  t.like(await validateChain(chain), { valid: true, rule: null, error: null, checked_blocks: 2 });
  // A dev-chain state write (anvil-style, outside the handlers) becomes part of block 2 and of its replay.
  await chain.writeDevState(new Map([[tokenBalanceKey(contract, bob.address), encodeU128(5n)]]));
  await chain.commit(await chain.propose([], proposerKey(chain.params, 2), chain.now()));
  t.deepEqual(invariantViolations(chain.state), [
    `tokens/supply-equals-balances: ${contract}: supply 10, balances sum to 15`,
    `tokens/supply-equals-balances: ${contract}: 1 holders counted, 2 non-zero balances`,
  ]);
  t.like(await validateChain(chain), {
    valid: false,
    checked_blocks: 3,
    height: 2,
    first_bad_height: 2,
    rule: 'invariant',
    error: invariantViolations(chain.state).join('; '),
  });
});
