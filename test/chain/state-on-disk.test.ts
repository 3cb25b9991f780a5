import test from 'ava';
import { Chain } from '../../ts/chain/chain.js';
import { applyGenesisAlloc } from '../../ts/chain/genesis-state.js';
import type { ChainParams } from '../../ts/chain/params.js';
import { validateChain } from '../../ts/chain/validate.js';
import { DEV_MNEMONIC, keyPairFromMnemonic, signTransaction, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { accountKey, getAccount, STREAM_CHUNK, StateOverlay, StateStore } from '../../ts/state/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { toHex } from '../../ts/util/index.js';
import { checkpointParams, checkpointValidator } from '../helpers/checkpoint-chain.js';
import { tempDir } from '../helpers/util.js';

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
const validator = checkpointValidator;
const TS = 1_700_000_000;
/** Recipients that do not exist before the block that pays them (new keys in every block). */
const recipient = (i: number): string => `0x${(0xbeef0000 + i).toString(16).padStart(40, '0')}`;

const params = checkpointParams;

async function openChain(dir: string, p: ChainParams, stateCacheBytes?: number) {
  const db = await openRocksStore(dir);
  const chain = new Chain(p, db, 4, { stateCacheBytes });
  chain.now = () => TS + 1000;
  await chain.open();
  return { chain, db };
}

test('a chain whose state cache holds almost nothing makes the same blocks, rollbacks and restarts', async (t) => {
  const p = params(new Map([[alice.address, 1000n * BASE_PER_COIN]]));
  const dirs = [tempDir(), tempDir()];
  for (const d of dirs) t.teardown(d.cleanup);
  const tiny = await openChain(dirs[0].dir, p, 1);
  const roomy = await openChain(dirs[1].dir, p);
  let nonce = 0n;
  for (let h = 1; h <= 6; h++) {
    const txs = Array.from({ length: 5 }, (_, i) =>
      signTransaction(
        {
          from: alice.address,
          to: recipient(h * 10 + i),
          amount: BASE_PER_COIN,
          fee: 10_000n,
          nonce: nonce++,
          chain_id: 7120,
          timestamp: TS,
        },
        alice,
      ),
    );
    for (const { chain } of [tiny, roomy]) await chain.commit(await chain.propose(txs, validator, TS + h));
    t.is(tiny.chain.head.hash, roomy.chain.head.hash, `block ${h}`);
    // An abandoned proposal changes nothing in either.
    for (const { chain } of [tiny, roomy]) chain.abandon(await chain.propose([], validator, TS + h));
    t.is(toHex(tiny.chain.state.root()), tiny.chain.head.state_root);
  }
  t.is(tiny.chain.state.memoryStats().unwritten, 0, 'every committed value is durable and out of memory');
  t.is(getAccount(tiny.chain.state, recipient(61)).balance, getAccount(roomy.chain.state, recipient(61)).balance);
  for (const { chain } of [tiny, roomy]) await chain.rollbackTo(3);
  t.is(toHex(tiny.chain.state.root()), tiny.chain.head.state_root);
  t.is(tiny.chain.state.get(accountKey(recipient(61))), undefined, 'a rolled-back account is gone');
  t.is(getAccount(tiny.chain.state, alice.address).nonce, 15n);
  const head = tiny.chain.head.hash;
  await tiny.db.close();
  await roomy.db.close();
  // A restart rebuilds the trie from disk and checks it against the head's root (open throws otherwise).
  const again = await openChain(dirs[0].dir, p, 1);
  t.is(again.chain.head.hash, head);
  t.is(again.chain.state.size, tiny.chain.state.size);
  t.is(getAccount(again.chain.state, alice.address).nonce, 15n);
  await again.db.close();
});

test('a genesis larger than a stream chunk is written in chunks with the same state root', async (t) => {
  const n = STREAM_CHUNK * 2 + 7;
  const alloc = new Map(Array.from({ length: n }, (_, i) => [recipient(i), BigInt(i + 1) * BASE_PER_COIN]));
  const p = params(alloc);
  const reference = new StateStore();
  const overlay = new StateOverlay(reference);
  applyGenesisAlloc(p, overlay);
  reference.applyChanges(overlay.changes);
  const dir = tempDir();
  t.teardown(dir.cleanup);
  const { chain, db } = await openChain(dir.dir, p);
  t.is(chain.head.state_root, toHex(reference.root()));
  t.is(chain.state.size, reference.size);
  t.is(chain.state.memoryStats().unwritten, 0);
  t.is(getAccount(chain.state, recipient(n - 1)).balance, getAccount(reference, recipient(n - 1)).balance);
  // Replay from genesis (a memory-only state) agrees with what was written.
  t.true((await validateChain(chain)).valid);
  await db.close();
});
