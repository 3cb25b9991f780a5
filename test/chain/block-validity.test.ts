import test from 'ava';
import type { Block } from '../../ts/chain/block.js';
import { type BlockRule, InvalidBlockError } from '../../ts/chain/validate-block.js';
import { validateChain } from '../../ts/chain/validate.js';
import { signDigest, signTransaction, ZERO_ADDRESS } from '../../ts/ledger/index.js';
import { fromHex, toHex } from '../../ts/util/index.js';
import {
  NOW,
  alice,
  bob,
  evmTransfer,
  openFixtureChain,
  proposerKey,
  reseal,
  transfer,
  validBlock,
} from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The same signature with s replaced by n - s: still verifies mathematically, but high-S. */
function highS(sigHex: string): string {
  const s = BigInt(`0x${sigHex.slice(64)}`);
  return sigHex.slice(0, 64) + (N - s).toString(16).padStart(64, '0');
}

interface Case {
  name: string;
  rule: BlockRule;
  /** Blocks to import first (valid), then the crafted one. */
  craft: (ctx: Awaited<ReturnType<typeof openFixtureChain>>) => Promise<{ before?: Block[]; block: Block }>;
}

const key1 = (c: { chain: { params: Parameters<typeof proposerKey>[0] } }, h = 1) => proposerKey(c.chain.params, h);

const cases: Case[] = [
  {
    name: 'the same key proposes heights 1 and 2 (proposer schedule)',
    rule: 'proposer',
    craft: async ({ chain }) => {
      const b1 = await validBlock(chain, []);
      await chain.importBlock(b1);
      const b2 = await validBlock(chain, []);
      return { block: reseal({ ...b2, validator: b1.validator }, key1({ chain }, 1)) };
    },
  },
  {
    name: 'a native transfer with fee 0, amount 0 and data "hello"',
    rule: 'tx_invalid',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, [transfer(alice, 0n)]);
      const bad = transfer(alice, 0n, { fee: 0n, amount: 0n, data: 'hello' });
      return { block: reseal({ ...b, transactions: [bad] }, key1({ chain })) };
    },
  },
  {
    name: 'an EVM transaction whose stored txid, sender, recipient and amount were forged',
    rule: 'tx_invalid',
    craft: async ({ chain }) => {
      const evm = await evmTransfer(alice, 0);
      const b = await validBlock(chain, [evm]);
      const forged = { ...evm, from_address: bob.address, to_address: alice.address, amount: 5n, txid: 'ab'.repeat(32) };
      return { block: reseal({ ...b, transactions: [forged] }, key1({ chain })) };
    },
  },
  {
    name: 'a bad proposer signature',
    rule: 'proposer_signature',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: { ...b, signature: toHex(signDigest(fromHex(b.hash), alice.privateKey)) } };
    },
  },
  {
    name: 'a high-S proposer signature',
    rule: 'proposer_signature',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: { ...b, signature: highS(b.signature) } };
    },
  },
  {
    name: 'a wrong state root',
    rule: 'state_root',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, [transfer(alice, 0n)]);
      return { block: reseal({ ...b, state_root: 'ee'.repeat(32) }, key1({ chain })) };
    },
  },
  {
    name: 'a swapped transaction order',
    rule: 'tx_apply',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, [transfer(alice, 0n), transfer(alice, 1n)]);
      return { block: reseal({ ...b, transactions: [b.transactions[1], b.transactions[0]] }, key1({ chain })) };
    },
  },
  {
    name: 'a high-S transaction signature',
    rule: 'tx_invalid',
    craft: async ({ chain }) => {
      const tx = transfer(alice, 0n);
      const b = await validBlock(chain, [tx]);
      return { block: reseal({ ...b, transactions: [{ ...tx, signature: highS(tx.signature) }] }, key1({ chain })) };
    },
  },
  {
    name: 'a transaction signature that does not verify',
    rule: 'tx_signature',
    craft: async ({ chain }) => {
      const tx = transfer(alice, 0n);
      const b = await validBlock(chain, [tx]);
      const other = signTransaction(
        { from: alice.address, to: bob.address, amount: 2n, fee: 10_000n, nonce: 0n, chain_id: 7120, timestamp: tx.timestamp },
        alice,
      );
      return { block: reseal({ ...b, transactions: [{ ...tx, signature: other.signature }] }, key1({ chain })) };
    },
  },
  {
    name: 'a replayed transaction (included at height 1, again at height 2)',
    rule: 'tx_apply',
    craft: async ({ chain }) => {
      const tx = transfer(alice, 0n);
      const b1 = await validBlock(chain, [tx]);
      await chain.importBlock(b1);
      const b2 = await validBlock(chain, []);
      return { block: reseal({ ...b2, transactions: [tx] }, key1({ chain }, 2)) };
    },
  },
  {
    name: 'a block over the gas limit',
    rule: 'gas_limit',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, gas_used: 30_000_001n }, key1({ chain })) };
    },
  },
  {
    name: 'gas used that differs from the execution',
    rule: 'gas_used',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, [await evmTransfer(alice, 0)]);
      return { block: reseal({ ...b, gas_used: 0n }, key1({ chain })) };
    },
  },
  {
    name: 'a wrong receipts root',
    rule: 'receipts_root',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, [transfer(alice, 0n)]);
      return { block: reseal({ ...b, receipts_root: '11'.repeat(32) }, key1({ chain })) };
    },
  },
  {
    name: 'a wrong logs bloom',
    rule: 'logs_bloom',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, logs_bloom: `ff${'00'.repeat(255)}` }, key1({ chain })) };
    },
  },
  {
    name: 'a timestamp before the parent',
    rule: 'timestamp_past',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, timestamp: chain.head.timestamp - 1 }, key1({ chain })) };
    },
  },
  {
    name: 'a timestamp too far ahead of the clock',
    rule: 'timestamp_future',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, timestamp: NOW + 3600 }, key1({ chain })) };
    },
  },
  {
    name: 'a consensus label the chain does not run (DPoS+BFT without BFT)',
    rule: 'consensus',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, consensus: 'DPoS+BFT' }, key1({ chain })) };
    },
  },
  {
    name: 'a round outside BFT',
    rule: 'round',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, round: 3 }, key1({ chain })) };
    },
  },
  {
    name: 'a justification outside BFT',
    rule: 'justification',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, justification: new Uint8Array([1, 2, 3]) }, key1({ chain })) };
    },
  },
  {
    name: 'a wrong height',
    rule: 'height',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, index: 2 }, proposerKey(chain.params, 2)) };
    },
  },
  {
    name: 'a previous hash that is not the parent',
    rule: 'parent_hash',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: reseal({ ...b, previous_hash: '22'.repeat(32) }, key1({ chain })) };
    },
  },
  {
    name: 'a hash that does not match the header',
    rule: 'header_hash',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      return { block: { ...b, hash: '33'.repeat(32) } };
    },
  },
  {
    name: 'a transactions root that does not fix the body (same txids, other signature bytes)',
    rule: 'tx_root',
    craft: async ({ chain }) => {
      const tx = transfer(alice, 0n);
      const b = await validBlock(chain, [tx]);
      return {
        block: reseal({ ...b, transactions: [{ ...tx, signature: highS(tx.signature) }] }, key1({ chain }), { keepRoot: true }),
      };
    },
  },
  {
    name: 'tx_count that disagrees with the body',
    rule: 'tx_count',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, [transfer(alice, 0n)]);
      return { block: reseal({ ...b, tx_count: 2 }, key1({ chain }), { keepRoot: true, keepCount: true }) };
    },
  },
  {
    name: 'the same transaction twice',
    rule: 'tx_duplicate',
    craft: async ({ chain }) => {
      const tx = transfer(alice, 0n);
      const b = await validBlock(chain, [tx]);
      return { block: reseal({ ...b, transactions: [tx, tx] }, key1({ chain })) };
    },
  },
  {
    name: 'a malformed transaction (signature of the wrong length)',
    rule: 'tx_malformed',
    craft: async ({ chain }) => {
      const tx = transfer(alice, 0n);
      const b = await validBlock(chain, [tx]);
      return { block: reseal({ ...b, transactions: [{ ...tx, signature: 'ab' }] }, key1({ chain })) };
    },
  },
  {
    name: 'an operation that is not active at its height',
    rule: 'tx_invalid',
    craft: async ({ chain }) => {
      const b = await validBlock(chain, []);
      const op = transfer(alice, 0n, {
        to: ZERO_ADDRESS,
        amount: 0n,
        // The PoA authority set closes at the DPoS activation height (0 on this chain).
        data: JSON.stringify({ AddAuthority: { address: bob.address, public_key: toHex(bob.publicKey), name: 'b' } }),
        fee: 10_000n,
      });
      return { block: reseal({ ...b, transactions: [op] }, key1({ chain })) };
    },
  },
];

for (const c of cases) {
  test(`rejects ${c.name}: rule ${c.rule}, nothing persists`, async (t) => {
    const tmp = tempDir();
    t.teardown(tmp.cleanup);
    const fx = await openFixtureChain(tmp.dir);
    t.teardown(() => fx.db.close());
    const { block } = await c.craft(fx);
    const height = fx.chain.height;
    const root = toHex(fx.chain.state.root());
    const err = await t.throwsAsync(fx.chain.importBlock(block), { instanceOf: InvalidBlockError });
    t.is(err?.rule, c.rule, err?.message);
    t.is(err?.height, block.index);
    t.is(fx.chain.height, height);
    t.is(toHex(fx.chain.state.root()), root);
    t.is(await fx.chain.blocks.getBlock(height + 1), null);
    // The same block written into the data dir behind validation's back: /chain/validate's replay
    // answers with the height and rule instead of throwing. (A wrong height cannot be stored at its place.)
    if (c.rule === 'height') return;
    await fx.chain.blocks.commit(block, new Map(), []);
    const v = await validateChain(fx.chain, block.index);
    t.false(v.valid);
    t.is(v.first_bad_height, block.index);
    t.is(v.rule, c.rule, v.error ?? '');
  });
}

test('a rejected block leaves the chain able to extend normally', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const good = await validBlock(fx.chain, [transfer(alice, 0n)]);
  await t.throwsAsync(fx.chain.importBlock(reseal({ ...good, state_root: '00'.repeat(32) }, proposerKey(fx.chain.params, 1))));
  await fx.chain.importBlock(good);
  t.is(fx.chain.height, 1);
  t.is(fx.chain.head.hash, good.hash);
});

test('valid blocks produced by the node pass validateAndApply, and the chain re-validates from genesis', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const maker = await openFixtureChain(`${tmp.dir}/maker`);
  const importer = await openFixtureChain(`${tmp.dir}/importer`);
  t.teardown(async () => {
    await maker.db.close();
    await importer.db.close();
  });
  const txs = [[transfer(alice, 0n), await evmTransfer(bob, 0)], [transfer(alice, 1n), transfer(bob, 1n)], []];
  for (const batch of txs) {
    const key = proposerKey(maker.chain.params, maker.chain.height + 1);
    const p = await maker.chain.propose(batch, key, NOW);
    t.is(p.block.tx_count, batch.length);
    await maker.chain.commit(p);
    // The importer sees the block as a peer would: fresh objects decoded from its bytes.
    const stored = await maker.chain.blocks.getBlock(p.block.index);
    await importer.chain.importBlock(stored as Block);
    t.is(importer.chain.head.hash, p.block.hash);
    t.is(importer.chain.head.state_root, p.block.state_root);
  }
  const v = await validateChain(importer.chain);
  t.true(v.valid, v.error ?? '');
  t.is(v.checked_blocks, 4);
});
