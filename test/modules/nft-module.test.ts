/**
 * The nft module as a NativeModule: one error class per failure with a stable `nft/` code (messages as
 * before) and the invariant naming a broken state.
 */
import test from 'ava';
import { invariantViolations } from '../../ts/ledger/index.js';
import { OperationFailed } from '../../ts/modules/index.js';
import {
  AlreadyFrozen,
  CollectionFrozen,
  NotMinter,
  SelfOperator,
  TokenIdTaken,
  TransferNotAllowed,
  UnknownCollection,
  UnknownNftToken,
  ZeroRecipient,
} from '../../ts/modules/nft/errors.js';
import { collectionAddress, nftModule } from '../../ts/modules/nft/index.js';
import { rawCollection, tokenKey } from '../../ts/modules/nft/keys.js';
import { StateOverlay, StateStore } from '../../ts/state/index.js';
import { alice, bob } from '../helpers/chain-fixture.js';
import { deployFields } from '../helpers/nft.js';
import { applyDirect } from './direct-call.js';

const ZERO = `0x${'0'.repeat(40)}`;
const nft = (state: StateOverlay, from: string, nonce: bigint, name: string, fields: Record<string, bigint | string | boolean>) =>
  applyDirect(nftModule, state, from, nonce, name, fields);

/** A state with alice's collection (nonce 0) and token 1 minted to her. */
function withCollection(): { store: StateStore; state: StateOverlay; c: string } {
  const store = new StateStore();
  const state = new StateOverlay(store);
  const d = deployFields();
  nft(state, alice.address, 0n, 'DeployNft', { ...d, max_supply: 0n, royalty_bps: 250n });
  const c = collectionAddress(alice.address, 0n);
  nft(state, alice.address, 1n, 'MintNft', { collection: c, to: alice.address, token_id: 1n });
  return { store, state, c };
}

test('each NFT failure is its own OperationFailed subclass with a stable nft/ code and the message receipts carry', (t) => {
  const { state, c } = withCollection();
  const other = collectionAddress(bob.address, 9n);
  const cases: [() => void, new (...a: never[]) => OperationFailed, string, string][] = [
    [
      () => nft(state, alice.address, 2n, 'BurnNft', { collection: other, token_id: 1n }),
      UnknownCollection,
      'nft/unknown_collection',
      `unknown collection ${other}`,
    ],
    [
      () => nft(state, alice.address, 2n, 'BurnNft', { collection: c, token_id: 5n }),
      UnknownNftToken,
      'nft/unknown_token',
      `token 5 does not exist in collection ${c}`,
    ],
    [
      () => nft(state, bob.address, 0n, 'MintNft', { collection: c, to: bob.address }),
      NotMinter,
      'nft/not_minter',
      'only the collection deployer or an operator it approved may mint',
    ],
    [
      () => nft(state, alice.address, 2n, 'MintNft', { collection: c, to: ZERO }),
      ZeroRecipient,
      'nft/zero_recipient',
      'cannot mint to the zero address',
    ],
    [
      () => nft(state, alice.address, 2n, 'MintNft', { collection: c, to: bob.address, token_id: 1n }),
      TokenIdTaken,
      'nft/token_id_taken',
      'token id 1 already exists',
    ],
    [
      () => nft(state, bob.address, 0n, 'TransferNft', { collection: c, token_id: 1n, to: bob.address }),
      TransferNotAllowed,
      'nft/not_allowed',
      'not allowed: the sender is not the owner, an approved spender or an operator of the owner',
    ],
    [
      () => nft(state, alice.address, 2n, 'TransferNft', { collection: c, token_id: 1n, to: ZERO }),
      ZeroRecipient,
      'nft/zero_recipient',
      'cannot transfer to the zero address: use BurnNft',
    ],
    [
      () => nft(state, alice.address, 2n, 'ApproveNftOperator', { collection: c, operator: alice.address, approved: true }),
      SelfOperator,
      'nft/self_operator',
      'an address cannot be its own operator',
    ],
  ];
  for (const [run, kind, code, message] of cases) {
    const err = t.throws(run, { instanceOf: kind });
    t.true(err instanceof OperationFailed);
    t.is(err.code, code);
    t.is(err.message, message);
  }
  nft(state, alice.address, 2n, 'FreezeNftCollection', { collection: c });
  t.is(
    t.throws(() => nft(state, alice.address, 3n, 'FreezeNftCollection', { collection: c }), { instanceOf: AlreadyFrozen }).code,
    'nft/already_frozen',
  );
  const frozen = t.throws(() => nft(state, alice.address, 3n, 'MintNft', { collection: c, to: bob.address }), {
    instanceOf: CollectionFrozen,
  });
  t.is(frozen.code, 'nft/frozen');
  t.is(frozen.message, `collection ${c} is frozen: no more tokens can be minted`);
});

test('the nft invariant names counters that disagree with the tokens, through invariantViolations', (t) => {
  const { store, state, c } = withCollection();
  store.applyChanges(state.changes);
  t.deepEqual(invariantViolations(store), []);
  // A token record dropped around the handlers (as a bug would): the counters still count it.
  const broken = new StateOverlay(store);
  broken.delete(tokenKey(rawCollection(c), 1n));
  store.applyChanges(broken.changes);
  t.deepEqual(invariantViolations(store), ['nft/owner-counts-equal-tokens: collection: 1 live by its counters, 0 tokens']);
});
