import test from 'ava';
import { ethers } from 'ethers';
import {
  PackMeter,
  chainCommon,
  decodeSignedEvmTransaction,
  fitsPack,
  packMeter,
  storedEvmTransaction,
} from '../../ts/execution/index.js';
import { privateKeyHex } from '../../ts/ledger/index.js';
import { fromHex } from '../../ts/util/index.js';
import { GENESIS_TS, NOW, alice, evmTransfer, openFixtureChain, proposerKey } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

test('PackMeter: ms per gas over the last 8 blocks of at least 1M EVM gas', (t) => {
  const m = new PackMeter();
  t.is(m.msPerGas(), undefined);
  m.record(999_999n, 5);
  t.is(m.msPerGas(), undefined, 'a block under 1M gas is overhead, not gas: left out');
  m.record(10_000_000n, 100);
  m.record(30_000_000n, 500);
  t.is(m.msPerGas(), 600 / 40_000_000, 'summed time over summed gas');
  for (let i = 0; i < 8; i++) m.record(2_000_000n, 2);
  t.is(m.msPerGas(), 16 / 16_000_000, 'only the last 8 count');
  m.reset();
  t.is(m.msPerGas(), undefined);
});

test('fitsPack with a measured cost per gas: beyond the packing gas, elapsed + gas limit x the measured rate within the budget', (t) => {
  const pack = { gas: 5_000_000n, ms: 400 };
  // Measured 100 Mgas/s (1e-5 ms per gas): a 35k-gas transfer is predicted at 0.35 ms.
  t.true(fitsPack(pack, 29_000_000n, 35_000n, 399.6, undefined, 1e-5));
  t.false(fitsPack(pack, 29_000_000n, 35_000n, 399.7, undefined, 1e-5));
  // The slowest rate (400 ms per 5M) would have stopped at 397.2 ms.
  t.false(fitsPack(pack, 29_000_000n, 35_000n, 397.3));
  // Measured slower than the slowest rate (a loaded machine): the measure rules.
  t.false(fitsPack(pack, 6_000_000n, 1_000_000n, 300, undefined, 2e-4));
  t.true(fitsPack(pack, 6_000_000n, 1_000_000n, 200, undefined, 2e-4));
  // What the measure admits must end within half the budget past it at the slowest rate (code unlike the
  // measured): a 4M-gas transaction (320 ms at the slowest rate, 40 ms measured) only in the first 280 ms.
  t.true(fitsPack(pack, 6_000_000n, 4_000_000n, 279.9, undefined, 1e-5));
  t.false(fitsPack(pack, 6_000_000n, 4_000_000n, 280.1, undefined, 1e-5));
  // Never past the validity limit; a transaction above the packing gas never goes in by time.
  t.false(fitsPack(pack, 29_990_000n, 21_000n, 0, undefined, 1e-9));
  t.false(fitsPack(pack, 6_000_000n, 5_000_001n, 0, undefined, 1e-9));
  // Within the packing gas: always; off (ms 0): the gas rule alone.
  t.true(fitsPack(pack, 1_000_000n, 21_000n, 10_000, undefined, 1));
  t.false(fitsPack({ gas: 5_000_000n, ms: 0 }, 5_000_000n, 21_000n, 0, undefined, 1e-9));
});

test('the proposer packs by the measured cost per gas, and its blocks feed the meter', async (t) => {
  // This thread's meter (only this test sets it).
  packMeter.reset();
  const { dir, cleanup } = tempDir();
  t.teardown(cleanup);
  const { chain, db } = await openFixtureChain(dir);
  t.teardown(() => db.close());
  const proposer = proposerKey(chain.params, 1).address;
  const txs = await Promise.all(Array.from({ length: 20 }, (_, i) => evmTransfer(alice, i)));
  // The packing gas holds one transfer; the budget is 10 s. The slowest rate (10 s per 21,000 gas) predicts a
  // second transfer at 10 s: with nothing measured, it waits for the next block.
  const pack = { gas: 21_000n, ms: 10_000 };
  const unmeasured = await chain.execute(txs, proposer, NOW, pack);
  t.is(unmeasured.result.included.length, 1);
  t.is(unmeasured.result.deferred.length, 19);
  // Measured fast (1,000 Mgas/s): all twenty fit the budget (and at the slowest rate each would still end
  // within the overrun, 15 s).
  packMeter.record(30_000_000n, 30);
  const fast = await chain.execute(txs, proposer, NOW, pack);
  t.is(fast.result.included.length, 20);
  t.is(fast.result.gasUsed, 20n * 21_000n);
  // Measured slow (1 ms per gas: 21 s per transfer): back to one.
  packMeter.reset();
  packMeter.record(1_000_000n, 1_000_000);
  const slow = await chain.execute(txs, proposer, NOW, pack);
  t.is(slow.result.included.length, 1);
  // Validation (no packing limit) takes them all, whatever the meter says.
  const validated = await chain.execute(txs, proposer, NOW);
  t.is(validated.result.included.length, 20);

  // A block of 2M EVM gas (a loop that runs out of gas) records its EVM time.
  packMeter.reset();
  const w = new ethers.Wallet(`0x${privateKeyHex(alice)}`);
  const raw = fromHex(
    await w.signTransaction({
      type: 2,
      chainId: 7120,
      nonce: 0,
      to: null,
      data: '0x5b600056',
      gasLimit: 2_000_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
    }),
  );
  const loop = storedEvmTransaction(decodeSignedEvmTransaction(raw, chainCommon(7120, 'prague')), raw, GENESIS_TS);
  const looped = await chain.execute([loop], proposer, NOW, pack);
  t.is(looped.result.gasUsed, 2_000_000n);
  const rate = packMeter.msPerGas();
  t.true(rate !== undefined && rate > 0 && rate * 2_000_000 <= looped.executeMs, `measured ${rate} ms per gas`);
});
