import test from 'ava';
import { tokenContractAddress } from '../../ts/modules/index.js';
import { ZERO_ADDRESS } from '../../ts/ledger/index.js';
import type { KvStore } from '../../ts/storage/index.js';
import { openFixtureChain, transfer } from '../helpers/chain-fixture.js';
import { type Run, buildRandomChain, commitBlock, historyParams as params, users } from '../helpers/history-chain.js';
import { tempDir } from '../helpers/util.js';

/** Every key and value of the store, as hex, in key order. */
const dump = (db: KvStore): string[] =>
  db.rangeSync({ gte: Buffer.from([0]), lt: Buffer.alloc(8, 0xff) }).map(([k, v]) => `${k.toString('hex')}=${v.toString('hex')}`);

/** A block deploying an SRC-20 token and moving it: native events the event index lists (its postings and counts). */
async function tokenBlock(run: Run): Promise<void> {
  const [owner, other] = users;
  const next = (u: (typeof users)[number]): bigint => {
    const n = run.nonces.get(u.address) as bigint;
    run.nonces.set(u.address, n + 1n);
    return n;
  };
  const op = (body: unknown, fee = 10_000n) =>
    transfer(owner, next(owner), { to: ZERO_ADDRESS, amount: 0n, fee, data: JSON.stringify(body) });
  const deployNonce = run.nonces.get(owner.address) as bigint;
  const token = tokenContractAddress(owner.address, deployNonce);
  await commitBlock(run.chain, [
    op({ Deploy: { name: 'Gold', symbol: 'GLD', decimals: 2, supply: 1_000_000, max_supply: 5_000_000 } }, 100_000n),
    op({ Transfer: { contract: token, to: other.address, amount: 1_000 } }),
  ]);
}

// The block store's core and its read-model contributors (address history and counts, daily aggregates, contract
// creations, log and event postings) write each block in one batch and remove it in one rollback batch: a rollback
// must leave the store byte for byte as it was at the target, so no contributor leaves a key behind or misses one.
test('a rollback leaves every key of the store as it was at the target height, contributors included', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir, params());
  const atGenesis = dump(db);
  // The first block deploys a contract (a contract-creation entry); the rest are transfers and contract calls.
  const run = await buildRandomChain(chain, 10, 0xb10c);
  await chain.blocks.history.flush();
  const mid = chain.height;
  const atMid = dump(db);
  await tokenBlock(run);
  await buildRandomChain(chain, 10, 0xb10d, run);
  t.true(chain.blocks.eventIndex.count(`token-account:${users[1].address.toLowerCase()}`) > 0);
  t.true(chain.height > mid);
  t.true(run.boxAddress !== '');
  t.notDeepEqual(dump(db), atMid);

  await chain.rollbackTo(mid);
  await chain.blocks.history.flush();
  t.deepEqual(dump(db), atMid);

  await chain.rollbackTo(0);
  await chain.blocks.history.flush();
  t.deepEqual(dump(db), atGenesis);
  t.is(await chain.blocks.contractCreation(run.boxAddress.toLowerCase()), null);
  await db.close();
});
