/**
 * The PoA engine on a real two-authority chain (RocksDB in a temp dir, real signatures), driven by a
 * manual clock: each slot fires when the test says so, so nothing waits on wall-clock time.
 */
import test, { type ExecutionContext } from 'ava';
import { type Chain, proposerAt } from '../../ts/chain/index.js';
import { type PoaClock, PoaEngine, type PoaOptions } from '../../ts/consensus/poa.js';
import type { KeyPair } from '../../ts/ledger/index.js';
import { getAccount } from '../../ts/state/index.js';
import { DEFAULT_MEMPOOL_LIMITS, Mempool, TxAdmission } from '../../ts/mempool/index.js';
import { NOW, alice, fixtureParams, openFixtureChain, proposerKey, transfer, validatorKeys } from '../helpers/chain-fixture.js';
import { bftKeys, bftParams } from '../helpers/bft-blocks.js';
import { tempDir, waitFor } from '../helpers/util.js';

const BLOCK_MS = 1000;

/** A clock whose time moves and whose timers fire only when the test says so. */
class ManualClock implements PoaClock {
  nowMs = 5_000_250;
  private nextHandle = 1;
  readonly timers = new Map<number, { fire: () => void; at: number }>();

  now(): number {
    return this.nowMs;
  }

  setTimeout(fire: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    this.timers.set(handle, { fire, at: this.nowMs + ms });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** The one timer set (a PoA engine keeps one at a time). */
  only(): { fire: () => void; at: number } {
    if (this.timers.size !== 1) throw new Error(`${this.timers.size} timers set`);
    return [...this.timers.values()][0];
  }

  /** Move time to the pending timer's deadline (plus `late` ms) and fire it. */
  fire(late = 0): void {
    const [handle, timer] = [...this.timers][0];
    this.timers.delete(handle);
    this.nowMs = timer.at + late;
    timer.fire();
  }
}

interface Setup {
  chain: Chain;
  pool: Mempool;
  admission: TxAdmission;
  clock: ManualClock;
  engine: (key: KeyPair, opts?: Partial<PoaOptions>) => PoaEngine;
}

async function setup(t: ExecutionContext, params = fixtureParams()): Promise<Setup> {
  const tmp = tempDir();
  const fx = await openFixtureChain(tmp.dir, params);
  const engines: PoaEngine[] = [];
  t.teardown(async () => {
    for (const e of engines) await e.stop();
    await fx.db.close();
    tmp.cleanup();
  });
  const pool = new Mempool(DEFAULT_MEMPOOL_LIMITS);
  const admission = new TxAdmission(fx.chain, pool);
  admission.now = () => NOW;
  const clock = new ManualClock();
  const engine = (key: KeyPair, opts: Partial<PoaOptions> = {}) => {
    const e = new PoaEngine(fx.chain, pool, key, { blockTimeMs: BLOCK_MS, maxBlockTxs: 100, ...opts }, clock);
    engines.push(e);
    return e;
  };
  return { chain: fx.chain, pool, admission, clock, engine };
}

/** The engines' slot ran to its end: the next one is scheduled again. */
const nextSlotScheduled = (clock: ManualClock) => waitFor(() => clock.timers.size === 1, 30_000, 'the next slot');

test('the proposer schedule takes the authorities in turn, by height', async (t) => {
  const { chain, engine } = await setup(t);
  const poa = engine(proposerKey(chain.params, 1));
  const expected = (h: number) => proposerAt(chain.params, chain.state, h)?.address ?? null;
  t.is(poa.nextProposer(), expected(1));
  t.is(poa.nextProposer(), proposerKey(chain.params, 1).address);
  t.not(expected(1), expected(2), 'two authorities alternate');
  t.is(expected(1), expected(3));
  t.deepEqual([expected(1), expected(2)].sort(), validatorKeys.map((k) => k.address).sort());
  await poa.produce();
  t.is(chain.height, 1);
  t.is(poa.nextProposer(), expected(2), 'follows the head');
  t.is(poa.finalizedHeight(), 1, 'a PoA block is final once committed');
});

test('slots are aimed at multiples of the block time; a block is produced on this node’s turn only', async (t) => {
  const { chain, clock, engine } = await setup(t);
  const first = proposerKey(chain.params, 1);
  const second = proposerKey(chain.params, 2);
  const mine = engine(first);
  const produced: number[] = [];
  mine.onProduced = (info) => produced.push(info.height);
  mine.start();
  t.true(mine.running);
  t.is(clock.only().at, 5_001_000, 'the next multiple of the block time, not now + block time');

  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 1);
  t.is(chain.head.validator, first.address);
  t.deepEqual(produced, [1]);
  t.is(clock.only().at, 5_002_000);

  // Height 2 is the other authority's: this node's slot passes without a block, and the next is set.
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 1, 'not its turn');
  t.deepEqual(produced, [1]);
  await mine.stop();

  // The other authority's engine (same chain, other key) takes height 2, then skips height 3.
  const theirs = engine(second);
  theirs.start();
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 2);
  t.is(chain.head.validator, second.address);
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 2, 'height 3 is not its turn');
});

test('a block committed after its slot ended reports how late it was', async (t) => {
  const { chain, clock, engine } = await setup(t);
  const poa = engine(proposerKey(chain.params, 1));
  const late: number[] = [];
  poa.onProduced = (info) => late.push(info.lateMs);
  poa.start();
  clock.fire(BLOCK_MS + 123); // the timer fires when its slot's whole block time has already passed
  await nextSlotScheduled(clock);
  t.deepEqual(late, [123]);
});

test('a node that may not propose (peers ahead) skips its turn', async (t) => {
  const { chain, clock, engine } = await setup(t);
  const poa = engine(proposerKey(chain.params, 1));
  let behind = true;
  poa.canPropose = () => !behind;
  poa.start();
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 0);
  behind = false;
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 1);
});

test('blocks take the pool’s transactions (at most maxBlockTxs) and the pool loses them', async (t) => {
  const { chain, pool, admission, clock, engine } = await setup(t);
  const txs = [0n, 1n, 2n].map((n) => transfer(alice, n));
  for (const tx of txs) t.is(await admission.submit(tx), 'pending');
  t.is(pool.size, 3);
  const first = engine(proposerKey(chain.params, 1), { maxBlockTxs: 2 });
  let poolChanged = 0;
  first.onPoolChanged = () => poolChanged++;
  first.start();
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 1);
  t.deepEqual(
    chain.head.transactions.map((tx) => tx.txid),
    txs.slice(0, 2).map((tx) => tx.txid),
  );
  t.is(pool.size, 1);
  t.is(poolChanged, 1);
  await first.stop();

  const second = engine(proposerKey(chain.params, 2));
  const info = await second.produce();
  t.is(info.txCount, 1);
  t.is(chain.head.transactions[0].txid, txs[2].txid);
  t.is(pool.size, 0);
  t.is(getAccount(chain.state, alice.address).nonce, 3n, 'all three executed');
});

test('stop clears the timer and waits for a block in production; start resumes the slots', async (t) => {
  const { chain, clock, engine } = await setup(t);
  const poa = engine(proposerKey(chain.params, 1));
  poa.start();
  clock.fire(); // production starts; stop() must wait for its commit and schedule nothing after it
  await poa.stop();
  t.false(poa.running);
  t.is(chain.height, 1, 'the block in flight was committed before stop returned');
  t.is(clock.timers.size, 0, 'no slot after stop');

  poa.start();
  t.true(poa.running);
  t.is(clock.timers.size, 1);
  await poa.stop();
  t.is(clock.timers.size, 0, 'a pending slot is cancelled');

  // Restarted on the other authority's turn, the same key waits for its own again.
  poa.start();
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 1);
});

test('from the BFT activation on, heights are the BFT engine’s: PoA produces nothing', async (t) => {
  const { chain, clock, engine } = await setup(t, bftParams());
  t.is(chain.consensusAt(1), 'DPoS+BFT');
  const poa = engine(proposerKey(chain.params, 1, bftKeys));
  t.is(poa.nextProposer(), proposerKey(chain.params, 1, bftKeys).address, 'its turn by the schedule');
  poa.start();
  clock.fire();
  await nextSlotScheduled(clock);
  t.is(chain.height, 0);
});
