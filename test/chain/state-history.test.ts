import { join } from 'node:path';
import test from 'ava';
import { ethers } from 'ethers';
import { dayOf } from '../../ts/chain/block-store.js';
import { Chain } from '../../ts/chain/chain.js';
import { HistoryUnavailableError, StaleStateViewError } from '../../ts/chain/state-history.js';
import { validateChain } from '../../ts/chain/validate.js';
import { chainCommon, decodeSignedEvmTransaction, storedEvmTransaction } from '../../ts/execution/index.js';
import { type KeyPair, keyPairFromMnemonic, privateKeyHex } from '../../ts/ledger/keys.js';
import type { SignedTransaction } from '../../ts/ledger/transaction.js';
import { BASE_PER_COIN } from '../../ts/ledger/units.js';
import { balanceWeiAt, codeAtHeight, ethCall, nonceAt, storageAtHeight } from '../../ts/services/index.js';
import { accountKey, decodeAccount, storageKey } from '../../ts/state/accounts.js';
import type { KeyStr } from '../../ts/state/state-store.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { changeSetPrefix, prefixEnd } from '../../ts/storage/keys.js';
import { fromHex } from '../../ts/util/hex.js';
import { GENESIS_TS, NOW, fixtureParams, openFixtureChain, proposerKey, transfer } from '../helpers/chain-fixture.js';
import { compiled } from '../helpers/contracts.js';
import { tempDir } from '../helpers/util.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const users: KeyPair[] = [0, 1, 2, 3, 4].map((i) => keyPairFromMnemonic(MNEMONIC, i));

function params() {
  const p = fixtureParams();
  p.alloc = new Map(users.map((u) => [u.address, 1_000n * BASE_PER_COIN]));
  return p;
}

/** Deterministic pseudo-random numbers (a failing seed can be replayed). */
function rng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

async function evmTx(
  from: KeyPair,
  nonce: bigint,
  to: string | null,
  data: string,
  gasLimit = 300_000n,
): Promise<SignedTransaction> {
  const w = new ethers.Wallet(`0x${privateKeyHex(from)}`);
  const raw = await w.signTransaction({
    type: 2,
    chainId: 7120,
    nonce: Number(nonce),
    to,
    data,
    gasLimit,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const bytes = fromHex(raw);
  return storedEvmTransaction(decodeSignedEvmTransaction(bytes, chainCommon(7120, 'prague')), bytes, GENESIS_TS);
}

const box = compiled('Box');
const boxIface = new ethers.Interface(box.abi);

interface Run {
  chain: Chain;
  /** The whole state after every height. */
  snapshots: Map<KeyStr, Buffer>[];
  nonces: Map<string, bigint>;
  boxAddress: string;
}

const stateCopy = (chain: Chain): Map<KeyStr, Buffer> => new Map([...chain.state.entries()].map(([k, v]) => [k, Buffer.from(v)]));
/** A state as sorted hex pairs (comparable whatever the insertion order). */
const sorted = (m: Map<KeyStr, Buffer>): string[] =>
  [...m].map(([k, v]) => `${Buffer.from(k, 'latin1').toString('hex')}=${v.toString('hex')}`).sort();

async function commitBlock(chain: Chain, txs: SignedTransaction[]): Promise<void> {
  const p = await chain.propose(txs, proposerKey(chain.params, chain.height + 1), NOW);
  if (p.block.transactions.length !== txs.length) throw new Error(`block ${p.block.index} dropped transactions`);
  await chain.commit(p);
}

/** Blocks of random native transfers and Box.store calls (contract storage writes), state copied at each height. */
async function buildRandomChain(chain: Chain, blocks: number, seed: number, run?: Run): Promise<Run> {
  const rand = rng(seed);
  const r: Run = run ?? {
    chain,
    snapshots: [stateCopy(chain)],
    nonces: new Map(users.map((u) => [u.address, 0n])),
    boxAddress: '',
  };
  const next = (u: KeyPair): bigint => {
    const n = r.nonces.get(u.address) as bigint;
    r.nonces.set(u.address, n + 1n);
    return n;
  };
  if (!r.boxAddress) {
    const nonce = next(users[0]);
    r.boxAddress = ethers.getCreateAddress({ from: users[0].address, nonce });
    const deploy = box.bytecode + ethers.AbiCoder.defaultAbiCoder().encode(['uint256'], [7]).slice(2);
    await commitBlock(chain, [await evmTx(users[0], nonce, null, deploy, 1_000_000n)]);
    r.snapshots[chain.height] = stateCopy(chain);
  }
  for (let b = 0; b < blocks; b++) {
    const txs: SignedTransaction[] = [];
    const count = rand(6);
    for (let i = 0; i < count; i++) {
      const from = users[rand(users.length)];
      if (rand(3) === 0) {
        const data = boxIface.encodeFunctionData('store', [BigInt(rand(1_000_000))]);
        txs.push(await evmTx(from, next(from), r.boxAddress, data));
      } else {
        const to = users[rand(users.length)].address;
        txs.push(transfer(from, next(from), { to, amount: BigInt(1 + rand(5_000_000)) }));
      }
    }
    await commitBlock(chain, txs);
    r.snapshots[chain.height] = stateCopy(chain);
  }
  return r;
}

/** Every key any snapshot holds, read at `height` through a view, equals the snapshot at that height. */
async function checkHeight(t: import('ava').ExecutionContext, run: Run, height: number): Promise<void> {
  const expected = run.snapshots[height];
  const keys = new Set<KeyStr>();
  for (const s of run.snapshots) if (s) for (const k of s.keys()) keys.add(k);
  const view = await run.chain.stateAt(height);
  try {
    for (const k of keys) {
      const got = view.get(k);
      const want = expected.get(k);
      if ((got === undefined) !== (want === undefined) || (got && want && !got.equals(want))) {
        t.fail(
          `height ${height}: key ${Buffer.from(k, 'latin1').toString('hex')} is ${got?.toString('hex')}, expected ${want?.toString('hex')}`,
        );
        return;
      }
    }
    const owner = Buffer.from(fromHex(run.boxAddress)).toString('latin1');
    const slots = [...expected.keys()].filter((k) => k.length === 53 && k.slice(1, 21) === owner).sort();
    t.deepEqual([...view.storageKeysOf(owner)].sort(), slots, `storage keys of Box at ${height}`);
  } finally {
    view.release();
  }
  // The service functions every interface calls.
  const ctx = { chain: run.chain };
  for (const u of users) {
    const raw = expected.get(accountKey(u.address));
    const acc = raw ? decodeAccount(raw) : { balance: 0n, nonce: 0n };
    t.is(await balanceWeiAt(ctx, u.address, height), acc.balance, `balance of ${u.address} at ${height}`);
    t.is(await nonceAt(ctx, u.address, height), acc.nonce, `nonce of ${u.address} at ${height}`);
  }
  const slot0 = expected.get(storageKey(fromHex(run.boxAddress), new Uint8Array(32)));
  const value = BigInt(`0x${slot0 ? slot0.toString('hex') : '0'}`);
  t.is(BigInt(ethers.hexlify(await storageAtHeight(ctx, run.boxAddress, 0n, height))), value, `Box slot 0 at ${height}`);
  const code = await codeAtHeight(ctx, run.boxAddress, height);
  t.is(code.length > 0, height >= 1, `Box code at ${height}`);
  if (height >= 1) {
    const out = await ethCall(ctx, { to: run.boxAddress, data: fromHex(boxIface.encodeFunctionData('get', [])) }, height);
    t.is(BigInt(ethers.hexlify(out)), value, `eth_call Box.get() at ${height}`);
  }
}

test('reads at random past heights equal the state snapshotted at each height, also after a restart', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openFixtureChain(tmp.dir, params());
  const run = await buildRandomChain(chain, 40, 0xc0ffee);
  const rand = rng(7);
  const heights = [0, 1, chain.height, chain.height - 1, ...Array.from({ length: 10 }, () => rand(chain.height + 1))];
  for (const h of heights) await checkHeight(t, run, h);

  await db.close();
  ({ chain, db } = await openFixtureChain(tmp.dir, params()));
  run.chain = chain;
  t.is(chain.height, run.snapshots.length - 1);
  for (const h of heights) await checkHeight(t, run, h);
  // Blocks committed after the restart extend the same history.
  await buildRandomChain(chain, 5, 99, run);
  for (const h of [...heights, chain.height - 2]) await checkHeight(t, run, h);
  await t.throwsAsync(chain.stateAt(chain.height + 1), { message: /does not exist/ });
  await db.close();
});

test('a view keeps its height while blocks are committed and refuses reads once released', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir, params());
  const run = await buildRandomChain(chain, 6, 3);
  const view = await chain.stateAt(3);
  const before = [...run.snapshots[3].keys()].map((k) => view.get(k));
  await buildRandomChain(chain, 6, 4, run);
  t.deepEqual(
    [...run.snapshots[3].keys()].map((k) => view.get(k)),
    before,
  );
  view.release();
  t.throws(() => view.get(accountKey(users[0].address)), { instanceOf: StaleStateViewError });
  await db.close();
});

test('--history N prunes older change sets and names the oldest available height', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const open = async () => {
    const db = await openRocksStore(join(tmp.dir, 'db'));
    const chain = new Chain(params(), db, 64, { history: { kind: 'recent', blocks: 5 } });
    chain.now = () => NOW;
    await chain.open();
    return { chain, db };
  };
  let { chain, db } = await open();
  const run = await buildRandomChain(chain, 30, 11);
  const oldest = chain.blocks.history.oldest;
  t.is(oldest, chain.height - 5);
  for (let h = oldest; h <= chain.height; h++) await checkHeight(t, run, h);
  const err = await t.throwsAsync(chain.stateAt(oldest - 1), { instanceOf: HistoryUnavailableError });
  t.regex(err?.message ?? '', new RegExp(`oldest available block is ${oldest}\\b`));
  t.is(err?.rpcCode, -32000);
  // The pruned change sets are gone from disk; the kept ones are there.
  t.is(db.rangeSync({ gte: changeSetPrefix(1), lt: changeSetPrefix(oldest + 1) }).length, 0);
  t.true(db.rangeSync({ gte: changeSetPrefix(oldest + 1), lt: prefixEnd(changeSetPrefix(chain.height)) }).length > 0);
  await db.close();
  ({ chain, db } = await open());
  t.is(chain.blocks.history.oldest, oldest);
  await db.close();
});

test('rollbackTo restores the state and drops later blocks atomically; the chain continues, restarts and validates', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openFixtureChain(tmp.dir, params());
  const run = await buildRandomChain(chain, 25, 21);
  const target = 12;
  const dropped = (await chain.blocks.readRange(target + 1, chain.height)).flatMap((b) => b.transactions.map((tx) => tx.txid));
  const droppedHash = (await chain.blocks.getBlock(target + 1))?.hash as string;
  const rolledBack: number[] = [];
  chain.on('rollback', (h) => rolledBack.push(h));
  const open = await chain.stateAt(20);
  await chain.rollbackTo(target);
  t.deepEqual(rolledBack, [target]);
  t.throws(() => open.get(accountKey(users[0].address)), { instanceOf: StaleStateViewError });
  open.release();
  t.is(chain.height, target);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[target]));
  t.is(await chain.blocks.getBlock(target + 1), null);
  // The daily aggregates count only the blocks that remain (every block of this chain is dated the same day).
  const kept = await chain.blocks.readRange(1, target);
  const day = chain.blocks.dayRecord(dayOf(NOW));
  t.is(day.blocks, target);
  t.is(
    day.txs,
    kept.reduce((n, b) => n + b.transactions.length, 0),
  );
  t.is(await chain.blocks.heightOfHash(droppedHash), null);
  for (const id of dropped) t.is(await chain.blocks.txLocation(id), null);
  for (let h = 0; h <= target; h++) await checkHeight(t, run, h);
  await t.throwsAsync(chain.rollbackTo(target + 1), { message: /does not exist/ });

  // New blocks on the rolled-back head, with the nonces of the state at the target.
  run.snapshots.length = target + 1;
  for (const u of users) {
    const raw = run.snapshots[target].get(accountKey(u.address));
    run.nonces.set(u.address, raw ? decodeAccount(raw).nonce : 0n);
  }
  await buildRandomChain(chain, 8, 77, run);
  for (const h of [0, 5, target, target + 3, chain.height]) await checkHeight(t, run, h);
  const txCounts = users.map((u) => chain.blocks.txCount(u.address));

  await db.close();
  ({ chain, db } = await openFixtureChain(tmp.dir, params()));
  run.chain = chain;
  t.is(chain.height, target + 8);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[chain.height]));
  t.deepEqual(
    users.map((u) => chain.blocks.txCount(u.address)),
    txCounts,
  );
  for (const h of [1, target, target + 5]) await checkHeight(t, run, h);
  const report = await validateChain(chain);
  t.true(report.valid, report.error ?? '');
  t.is(report.checked_blocks, chain.height + 1);
  // Full history: a rollback reaches genesis.
  await chain.rollbackTo(0);
  t.is(chain.height, 0);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[0]));
  await db.close();
});
