/**
 * Runs of blocks committed in one atomic write (Chain.importRun, a syncing node's catch-up): the same head,
 * state and announcements as block by block, durable across a reopen; an invalid block in the run is rejected
 * by its rule with the blocks before it committed and nothing of it kept. Real chains on RocksDB in temp
 * dirs: one makes the blocks, a second one receives them as bytes.
 */
import test from 'ava';
import { type Block, decodeBlock, encodeBlock } from '../../ts/chain/block.js';
import { InvalidBlockError } from '../../ts/chain/validate-block.js';
import { type KeyPair, signDigest } from '../../ts/ledger/index.js';
import { getAccount } from '../../ts/state/index.js';
import { toHex } from '../../ts/util/index.js';
import { bftKeys, bftParams, nextFinalized } from '../helpers/bft-blocks.js';
import { alice, bob, openFixtureChain, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

// Not the dev network: a dev chain folds its between-block writes into each block and imports block by block.
const params = bftParams('testnet');

/** `n` finalized blocks of two transfers each (as a peer sends them: bytes), and the syncing chain's dir. */
async function setup(t: import('ava').ExecutionContext, n: number): Promise<{ blocks: Block[]; dir: string }> {
  const d1 = tempDir();
  const d2 = tempDir();
  t.teardown(() => {
    d1.cleanup();
    d2.cleanup();
  });
  const src = await openFixtureChain(d1.dir, params);
  const blocks: Block[] = [];
  for (let i = 0; i < n; i++) {
    blocks.push(await nextFinalized(src.chain, [transfer(alice, BigInt(i)), transfer(bob, BigInt(i), { to: alice.address })]));
  }
  await src.db.close();
  return { blocks: blocks.map((b) => decodeBlock(encodeBlock(b))), dir: d2.dir };
}

test('a run commits in one write: the same head and state as block by block, announced block by block, durable', async (t) => {
  const { blocks, dir } = await setup(t, 6);
  const sync = await openFixtureChain(dir, params);
  const announced: { height: number; head: number; root: string }[] = [];
  sync.chain.on('block', (b) =>
    announced.push({ height: b.index, head: sync.chain.height, root: sync.chain.state.root().toString('hex') }),
  );
  await sync.chain.verifyAhead(blocks);
  t.is(await sync.chain.importRun(blocks), 6);
  t.is(sync.chain.height, 6);
  t.is(sync.chain.head.hash, blocks[5].hash);
  // Each announcement sees the chain at that block: its head and its state root.
  t.deepEqual(
    announced,
    blocks.map((b) => ({ height: b.index, head: b.index, root: b.state_root })),
  );
  const balances = [alice, bob].map((k) => getAccount(sync.chain.state, k.address).balance);
  await sync.db.close();
  const reopened = await openFixtureChain(dir, params);
  t.teardown(() => reopened.db.close());
  t.is(reopened.chain.height, 6);
  t.is(reopened.chain.head.hash, blocks[5].hash);
  t.deepEqual(
    [alice, bob].map((k) => getAccount(reopened.chain.state, k.address).balance),
    balances,
  );
  for (const b of blocks) t.is((await reopened.chain.blocks.getBlock(b.index))?.hash, b.hash);
});

test('an invalid block ends the run: the blocks before it are committed, nothing of it kept, its rule named', async (t) => {
  const { blocks, dir } = await setup(t, 5);
  const sync = await openFixtureChain(dir, params);
  const notProposer = (b: Block) => bftKeys.find((k) => k.address !== b.validator) as KeyPair;
  const run = [...blocks];
  run[2] = { ...run[2], signature: toHex(signDigest(Buffer.from(run[2].hash, 'hex'), notProposer(run[2]).privateKey)) };
  const err = await t.throwsAsync(sync.chain.importRun(run), { instanceOf: InvalidBlockError });
  t.is(err?.rule, 'proposer_signature', err?.message);
  t.is(sync.chain.height, 2);
  t.is(sync.chain.head.hash, blocks[1].hash);
  // The rest of the run (the good block 3 and on) still imports on top.
  t.is(await sync.chain.importRun(blocks.slice(2)), 3);
  t.is(sync.chain.head.state_root, blocks[4].state_root);
  await sync.db.close();
  const reopened = await openFixtureChain(dir, params);
  t.teardown(() => reopened.db.close());
  t.is(reopened.chain.head.hash, blocks[4].hash);
});

test('a run that does not extend the head is refused whole', async (t) => {
  const { blocks, dir } = await setup(t, 3);
  const sync = await openFixtureChain(dir, params);
  t.teardown(() => sync.db.close());
  const err = await t.throwsAsync(sync.chain.importRun(blocks.slice(1)), { instanceOf: InvalidBlockError });
  t.is(err?.rule, 'height', err?.message);
  t.is(sync.chain.height, 0);
  t.is(await sync.chain.importRun(blocks), 3);
});
