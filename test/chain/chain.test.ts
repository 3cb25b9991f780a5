import test from 'ava';
import { Chain } from '../../ts/chain/chain.js';
import type { ChainParams } from '../../ts/chain/params.js';
import { PRESET_ACTIVATION } from '../../ts/chain/params.js';
import {
  DEV_MNEMONIC,
  keyPairFromMnemonic,
  randomKeyPair,
  signTransaction,
  BASE_PER_COIN,
  WEI_PER_BASE,
  getSupply,
} from '../../ts/ledger/index.js';
import { getAccount } from '../../ts/state/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { toHex } from '../../ts/util/index.js';
import { tempDir } from '../helpers/util.js';

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
const bob = keyPairFromMnemonic(DEV_MNEMONIC, 1);

function params(validator: string, pub: string): ChainParams {
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: 1_700_000_000,
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: validator, public_key: pub, name: 'v' }],
    alloc: new Map([[alice.address, 1000n * BASE_PER_COIN]]),
    evmHardfork: 'prague',
    epochLength: 3600,
  };
}

test('blocks apply transfers exactly (amount, fee split, burn, reward) and survive a reopen', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const validator = randomKeyPair();
  const p = params(validator.address, toHex(validator.publicKey));
  let db = await openRocksStore(tmp.dir);
  const chain = new Chain(p, db, 4);
  await chain.open();
  const genesisRoot = chain.head.state_root;
  const txs = [0n, 1n, 2n].map((nonce) =>
    signTransaction(
      {
        from: alice.address,
        to: bob.address,
        amount: 5n * BASE_PER_COIN,
        fee: 10_001n,
        nonce,
        chain_id: 7120,
        timestamp: 1_700_000_000,
      },
      alice,
    ),
  );
  const proposal = await chain.propose(txs, validator, 1_700_000_001);
  await chain.commit(proposal);
  t.is(chain.height, 1);
  t.is(proposal.block.tx_count, 3);
  const a = getAccount(chain.state, alice.address);
  const b = getAccount(chain.state, bob.address);
  const v = getAccount(chain.state, validator.address);
  t.is(a.nonce, 3n);
  t.is(a.balance, (1000n * BASE_PER_COIN - 3n * (5n * BASE_PER_COIN + 10_001n)) * WEI_PER_BASE);
  t.is(b.balance, 15n * BASE_PER_COIN * WEI_PER_BASE);
  const reward = 2n * BASE_PER_COIN;
  t.is(v.balance, (reward + 3n * 5000n) * WEI_PER_BASE);
  const supply = getSupply(chain.state);
  t.is(supply.burned, 3n * 5001n * WEI_PER_BASE);
  t.is(supply.minted, (1000n * BASE_PER_COIN + reward) * WEI_PER_BASE);
  // A stale nonce in a later block is skipped, not applied.
  const stale = await chain.propose([txs[0]], validator, 1_700_000_002);
  t.is(stale.block.tx_count, 0);
  t.is(stale.result.dropped.length, 1);
  await chain.commit(stale);
  for (let i = 0; i < 6; i++) await chain.commit(await chain.propose([], validator, 1_700_000_003 + i));
  const headHash = chain.head.hash;
  const root = chain.head.state_root;
  t.not(root, genesisRoot);
  await db.close();

  db = await openRocksStore(tmp.dir);
  const reopened = new Chain(p, db, 4);
  await reopened.open();
  t.is(reopened.height, 8);
  t.is(reopened.head.hash, headHash);
  t.is(toHex(reopened.state.root()), root);
  // Block 1 is outside the 4-block window now and is read from disk.
  const b1 = await reopened.blocks.getBlock(1);
  t.is(b1?.transactions.length, 3);
  t.deepEqual(await reopened.blocks.txLocation(txs[2].txid), { height: 1, index: 2 });
  t.true(Chain.verifyBlockSignature(b1!, toHex(validator.publicKey)));
  t.deepEqual(
    (await reopened.blocks.addressHistory(bob.address, 0, 10)).map((l) => l.index),
    [2, 1, 0],
  );
  t.is(reopened.blocks.txCount(alice.address), 3);
  // Receipts of a window block read after the reopen are decoded once and kept; older ones are read each time.
  const [inWindow] = reopened.blocks.receiptsOf([8]);
  t.is(reopened.blocks.receiptsOf([8])[0], inWindow);
  const [first] = reopened.blocks.receiptsOf([1]);
  t.is(first?.length, 3);
  t.not(reopened.blocks.receiptsOf([1])[0], first);
  t.deepEqual(reopened.blocks.receiptsOf([1])[0], first);
  await db.close();
});

test('an abandoned proposal leaves the state root untouched', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const validator = randomKeyPair();
  const db = await openRocksStore(tmp.dir);
  t.teardown(() => db.close());
  const chain = new Chain(params(validator.address, toHex(validator.publicKey)), db, 10);
  await chain.open();
  const before = toHex(chain.state.root());
  const tx = signTransaction(
    { from: alice.address, to: bob.address, amount: 1n, fee: 10_000n, nonce: 0n, chain_id: 7120, timestamp: 1_700_000_000 },
    alice,
  );
  const p = await chain.propose([tx], validator, 1_700_000_001);
  t.not(toHex(chain.state.root()), before);
  chain.abandon(p);
  t.is(toHex(chain.state.root()), before);
  t.is(getAccount(chain.state, alice.address).nonce, 0n);
});
