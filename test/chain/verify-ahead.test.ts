/**
 * Signatures verified ahead of import (what a syncing node does with a run of blocks): the run then
 * imports through every rule with the same outcome as block by block, and a block in the run with a bad
 * proposer signature, a forged precommit or a bad transaction signature is still rejected by that rule,
 * the blocks before it imported and nothing of it kept. Real chains on RocksDB in temp dirs: one makes
 * the blocks, a second one (a syncing node) receives them as bytes.
 */
import test from 'ava';
import { type Block, decodeBlock, encodeBlock } from '../../ts/chain/block.js';
import type { Chain } from '../../ts/chain/chain.js';
import { type BlockRule, InvalidBlockError } from '../../ts/chain/validate-block.js';
import { type KeyPair, keyPairFromMnemonic, signDigest, isSignatureVerified, type SignedTransaction } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { NOW, alice, bob, fixtureParams, openFixtureChain, reseal, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';
import { bftKeyOf, bftKeys, bftParams, certificate as certificateOf, nextFinalized } from '../helpers/bft-blocks.js';

const keys = bftKeys;
const params = bftParams(); // DPoS+BFT from height 1 with four validators
const keyOf = bftKeyOf;
const certificate = (b: Block, signers: KeyPair[]) => certificateOf(params, b, signers);
const next = nextFinalized;

/** A source chain with `n` finalized blocks of two transfers each, and an empty chain to sync them. */
async function chains(t: import('ava').ExecutionContext, n: number): Promise<{ blocks: Block[]; sync: Chain }> {
  const d1 = tempDir();
  const d2 = tempDir();
  const src = await openFixtureChain(d1.dir, params);
  const dst = await openFixtureChain(d2.dir, params);
  t.teardown(async () => {
    await src.db.close();
    await dst.db.close();
    d1.cleanup();
    d2.cleanup();
  });
  const blocks: Block[] = [];
  for (let i = 0; i < n; i++) {
    blocks.push(await next(src.chain, [transfer(alice, BigInt(i)), transfer(bob, BigInt(i), { to: alice.address })]));
  }
  return { blocks, sync: dst.chain };
}

/** Blocks as a peer sends them (fresh objects: nothing verified yet). */
const wire = (bs: Block[]): Block[] => bs.map((b) => decodeBlock(encodeBlock(b)));

test('a run of blocks verified ahead imports with every rule, to the same state', async (t) => {
  const { blocks, sync } = await chains(t, 4);
  const run = wire(blocks);
  const ahead = await sync.verifyAhead(run);
  // Per block: the proposer, three precommits and two transfers (last_commit equals the parent's certificate).
  t.deepEqual(ahead, { checked: 4 * 6, invalid: 0 });
  t.true(run.every((b) => b.transactions.every(isSignatureVerified)));
  for (const b of run) await sync.importBlock(b);
  t.is(sync.height, 4);
  t.is(sync.head.state_root, blocks[3].state_root);
});

async function rejectedInRun(t: import('ava').ExecutionContext, spoil: (b: Block) => Block, rule: BlockRule): Promise<void> {
  const { blocks, sync } = await chains(t, 3);
  const run = wire(blocks);
  run[1] = spoil(run[1]);
  const ahead = await sync.verifyAhead(run);
  t.true(ahead.invalid >= 1, 'the bad signature failed ahead');
  await sync.importBlock(run[0]);
  const err = await t.throwsAsync(sync.importBlock(run[1]), { instanceOf: InvalidBlockError });
  t.is(err?.rule, rule, err?.message);
  t.is(sync.height, 1, 'the block before it imported, nothing of it kept');
  t.is(sync.head.hash, blocks[0].hash);
}

test('a bad proposer signature in a run verified ahead is still rejected by its rule', async (t) => {
  const notProposer = (b: Block) => keys.find((k) => k.address !== b.validator) as KeyPair;
  await rejectedInRun(
    t,
    (b) => ({ ...b, signature: toHex(signDigest(Buffer.from(b.hash, 'hex'), notProposer(b).privateKey)) }),
    'proposer_signature',
  );
});

test('a forged precommit in a run verified ahead is still rejected by its rule', async (t) => {
  await rejectedInRun(
    t,
    (b) => {
      const forged = { ...b, hash: 'ab'.repeat(32) };
      // Three real validators' precommits, signed for another block hash.
      return { ...b, justification: certificate(forged, keys.slice(0, 3)) };
    },
    'justification',
  );
});

test('a bad transaction signature in a run verified ahead is still rejected by its rule', async (t) => {
  await rejectedInRun(
    t,
    (b) => {
      const tx = b.transactions[0];
      // Another valid signature by the same key over another digest: well-formed, low-S, wrong.
      const other = transfer(alice, 99n);
      const changed = reseal(
        { ...b, transactions: [{ ...tx, signature: other.signature }, ...b.transactions.slice(1)] },
        keyOf(b.validator),
      );
      return { ...changed, justification: certificate(changed, keys.slice(0, 3)) };
    },
    'tx_signature',
  );
});
