import type { ExecutionContext } from 'ava';
import type { Chain } from '../../ts/chain/index.js';
import { NftLists, NftReads, collectionAddress, isNftKey, nftInvariantViolations } from '../../ts/modules/index.js';
import {
  invariantViolations,
  type KeyPair,
  keyPairFromMnemonic,
  type SignedTransaction,
  signTransaction,
  BASE_PER_COIN,
  MIN_TX_FEE_BASE,
  ZERO_ADDRESS,
} from '../../ts/ledger/index.js';
import { TxAdmission, DEFAULT_MEMPOOL_LIMITS, Mempool } from '../../ts/mempool/index.js';
import { getAccount } from '../../ts/state/index.js';
import { nftIndexOf } from '../../ts/indexes/index.js';
import { stringifyExact } from '../../ts/util/index.js';
import { GENESIS_TS, NOW, alice, fixtureParams, openFixtureChain, proposerKey } from './chain-fixture.js';
import { tempDir } from './util.js';

/** A third funded account where a test sets it up (index 2 of the fixture mnemonic). */
export const carol = keyPairFromMnemonic('test test test test test test test test test test test junk', 2);

/** tx.data of an NFT operation: the externally tagged JSON of the wire format (exact integers). */
export const nftData = (name: string, fields: Record<string, unknown>): string => stringifyExact({ [name]: fields });

/** A signed NFT operation: to the zero address, amount 0, the minimum fee unless `fee` says otherwise. */
export function nftTx(
  key: KeyPair,
  nonce: bigint,
  name: string,
  fields: Record<string, unknown>,
  opts: { fee?: bigint; chainId?: number } = {},
): SignedTransaction {
  const fee = opts.fee ?? (name === 'DeployNft' ? 10n * MIN_TX_FEE_BASE : MIN_TX_FEE_BASE);
  return signTransaction(
    {
      from: key.address,
      to: ZERO_ADDRESS,
      amount: 0n,
      fee,
      nonce,
      chain_id: opts.chainId ?? 7120,
      timestamp: GENESIS_TS,
      data: nftData(name, fields),
    },
    key,
  );
}

/** The NFT part of the state, key -> value hex (to compare before and after). */
export function nftState(chain: Chain): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of chain.state.entries()) if (isNftKey(k)) out.set(k, v.toString('hex'));
  return out;
}

/** The NFT invariants, with the index the node keeps for this chain checked against a fresh build. */
export async function nftInvariants(chain: Chain): Promise<string[]> {
  return nftInvariantViolations(
    () => chain.state.entries(),
    (k) => chain.state.get(k),
    await nftIndexOf(chain),
  );
}

/**
 * A fixture chain with a pool and admission (the node's way in), and two ways to make blocks: from the
 * pool, or from given transactions without admission (what a proposer that skips the dry-run would do).
 */
export async function nftChain(t: ExecutionContext, params?: ReturnType<typeof fixtureParams>) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const fx = await openFixtureChain(tmp.dir, params);
  t.teardown(() => fx.db.close());
  const pool = new Mempool(DEFAULT_MEMPOOL_LIMITS);
  const admission = new TxAdmission(fx.chain, pool);
  admission.now = () => NOW;
  /** The next nonce of key: committed, plus its transactions in the pool. */
  const nonce = (key: KeyPair): bigint =>
    getAccount(fx.chain.state, key.address).nonce + BigInt(pool.pendingOf(key.address).length);
  const blockOf = async (txs: readonly SignedTransaction[]) => {
    const key = proposerKey(fx.chain.params, fx.chain.height + 1);
    const p = await fx.chain.propose(txs, key, NOW);
    pool.onBlock(
      p.result.included,
      p.result.dropped.map((d) => d.tx),
    );
    await fx.chain.commit(p);
    // Every module's invariants hold after every block (ts/modules/<name>/invariants.ts).
    t.deepEqual(invariantViolations(fx.chain.state), [], `module invariants after block ${fx.chain.height}`);
    admission.onBlock();
    return p;
  };
  return {
    ...fx,
    pool,
    admission,
    nonce,
    /** Sign an operation with key's next nonce (or the one given). */
    op: (key: KeyPair, name: string, fields: Record<string, unknown>, o: { fee?: bigint; nonce?: bigint } = {}) =>
      nftTx(key, o.nonce ?? nonce(key), name, fields, { fee: o.fee }),
    /** Submit through admission (refusals reject). */
    submit: (tx: SignedTransaction) => admission.submit(tx),
    /** A block of the pool's transactions. */
    produce: () => blockOf(pool.take(1000)),
    /** A block of exactly these transactions, past admission. */
    include: (txs: readonly SignedTransaction[]) => blockOf(txs),
  };
}

/** The deploy fields of the tests' collection, with overrides. */
export const deployFields = (over: Record<string, unknown> = {}) => ({
  name: 'Punks',
  symbol: 'PNK',
  max_supply: 0,
  royalty_bps: 250,
  royalty_recipient: alice.address,
  base_uri: 'ipfs://punks',
  ...over,
});

/**
 * nftChain with carol funded (and NFTs activated at `activation` when given), plus the steps the tests take:
 * run (admission + block), ok, deploy, mint, and refused (400 at admission, nothing changed).
 */
export async function nftScenario(t: ExecutionContext, activation?: number) {
  const params = fixtureParams();
  params.alloc.set(carol.address, 1_000n * BASE_PER_COIN);
  if (activation !== undefined) params.activation = { ...params.activation, nft: activation };
  const s = await nftChain(t, params);
  let index = await nftIndexOf(s.chain);
  /** The node's index now (a rollback replaces it). */
  const refreshIndex = async () => {
    index = await nftIndexOf(s.chain);
    return index;
  };
  const reads = () => new NftReads(s.chain.state, s.chain.height + 1);
  const lists = () => new NftLists(reads(), index);
  /** Submit through admission, make a block; the transaction's receipt. */
  const run = async (tx: SignedTransaction) => {
    await s.submit(tx);
    const p = await s.produce();
    const i = p.result.included.findIndex((x) => x.txid === tx.txid);
    if (i < 0) throw new Error('not included');
    return p.result.receipts[i];
  };
  const ok = async (key: KeyPair, name: string, fields: Record<string, unknown>) => {
    const r = await run(s.op(key, name, fields));
    t.is(r.status, 1, Buffer.from(r.output).toString());
    return r;
  };
  const deploy = async (over: Record<string, unknown> = {}, key = alice): Promise<string> => {
    const tx = s.op(key, 'DeployNft', deployFields(over));
    const r = await run(tx);
    t.is(r.status, 1, Buffer.from(r.output).toString());
    return collectionAddress(key.address, tx.nonce);
  };
  const mint = (collection: string, to: string, extra: Record<string, unknown> = {}, key = alice) =>
    ok(key, 'MintNft', { collection, to, ...extra });
  /** Admission refuses with a message containing `reason`; the pool and the NFT state are unchanged. */
  const refused = async (key: KeyPair, name: string, fields: Record<string, unknown>, reason: string) => {
    const before = nftState(s.chain);
    const tx = s.op(key, name, fields);
    const err = await t.throwsAsync(s.submit(tx));
    t.true(err?.message.includes(reason), `"${err?.message}" should say "${reason}"`);
    t.false(s.pool.has(tx.txid));
    t.deepEqual(nftState(s.chain), before);
  };
  return { ...s, reads, lists, index: refreshIndex, run, ok, deploy, mint, refused };
}

export const invariantsHold = async (t: ExecutionContext, chain: Chain) => t.deepEqual(await nftInvariants(chain), []);
