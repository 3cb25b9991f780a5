/**
 * A chain of random native transfers and contract storage writes with the whole state copied at every
 * height, and the check that reads at a past height equal the copy: the state history's tests share them
 * (test/chain/state-history.test.ts, test/chain/history-indexer.test.ts and the crash child).
 */
import type { ExecutionContext } from 'ava';
import { ethers } from 'ethers';
import type { Chain } from '../../ts/chain/index.js';
import { chainCommon, decodeSignedEvmTransaction, storedEvmTransaction } from '../../ts/execution/index.js';
import {
  type KeyPair,
  keyPairFromMnemonic,
  privateKeyHex,
  type SignedTransaction,
  BASE_PER_COIN,
} from '../../ts/ledger/index.js';
import { codeAtHeight, ethCall, getBalance, nonceAt, storageAtHeight } from '../../ts/services/index.js';
import { accountKey, decodeAccount, storageKey, type KeyStr } from '../../ts/state/index.js';
import { fromHex } from '../../ts/util/index.js';
import { GENESIS_TS, NOW, fixtureParams, proposerKey, transfer } from './chain-fixture.js';
import { compiled } from './contracts.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
export const users: KeyPair[] = [0, 1, 2, 3, 4].map((i) => keyPairFromMnemonic(MNEMONIC, i));

export function historyParams() {
  const p = fixtureParams();
  p.alloc = new Map(users.map((u) => [u.address, 1_000n * BASE_PER_COIN]));
  return p;
}

/** Deterministic pseudo-random numbers (a failing seed can be replayed). */
export function rng(seed: number): (n: number) => number {
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

export interface Run {
  chain: Chain;
  /** The whole state after every height. */
  snapshots: Map<KeyStr, Buffer>[];
  nonces: Map<string, bigint>;
  boxAddress: string;
}

export const stateCopy = (chain: Chain): Map<KeyStr, Buffer> =>
  new Map([...chain.state.entries()].map(([k, v]) => [k, Buffer.from(v)]));
/** A state as sorted hex pairs (comparable whatever the insertion order). */
export const sorted = (m: Map<KeyStr, Buffer>): string[] =>
  [...m].map(([k, v]) => `${Buffer.from(k, 'latin1').toString('hex')}=${v.toString('hex')}`).sort();

export async function commitBlock(chain: Chain, txs: SignedTransaction[]): Promise<void> {
  const p = await chain.propose(txs, proposerKey(chain.params, chain.height + 1), NOW);
  if (p.block.transactions.length !== txs.length) throw new Error(`block ${p.block.index} dropped transactions`);
  await chain.commit(p);
}

/** Blocks of random native transfers and Box.store calls (contract storage writes), state copied at each height. */
export async function buildRandomChain(chain: Chain, blocks: number, seed: number, run?: Run): Promise<Run> {
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
export async function checkHeight(t: ExecutionContext, run: Run, height: number): Promise<void> {
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
  // Heights are numbers here, so the engine's finalized height is never asked: every committed block is final.
  const ctx = { chain: run.chain, consensus: { finalizedHeight: () => run.chain.height } };
  for (const u of users) {
    const raw = expected.get(accountKey(u.address));
    const acc = raw ? decodeAccount(raw) : { balance: 0n, nonce: 0n };
    t.is(await getBalance(ctx, { address: u.address, at: height }), acc.balance, `balance of ${u.address} at ${height}`);
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

/** A run's state copies, nonces and contract address as JSON (the crash child hands them to its test). */
export function runToJson(run: Run): string {
  return JSON.stringify({
    snapshots: run.snapshots.map((s) => [...s].map(([k, v]) => [Buffer.from(k, 'latin1').toString('hex'), v.toString('hex')])),
    nonces: [...run.nonces].map(([a, n]) => [a, n.toString()]),
    boxAddress: run.boxAddress,
  });
}

export function runFromJson(chain: Chain, json: string): Run {
  const o = JSON.parse(json) as { snapshots: [string, string][][]; nonces: [string, string][]; boxAddress: string };
  return {
    chain,
    snapshots: o.snapshots.map(
      (s) => new Map(s.map(([k, v]) => [Buffer.from(k, 'hex').toString('latin1'), Buffer.from(v, 'hex')] as [KeyStr, Buffer])),
    ),
    nonces: new Map(o.nonces.map(([a, n]) => [a, BigInt(n)])),
    boxAddress: o.boxAddress,
  };
}
