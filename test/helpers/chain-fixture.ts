import { join } from 'node:path';
import {
  type Block,
  blockHash,
  headerOf,
  txMerkleRoot,
  Chain,
  type ChainParams,
  PRESET_ACTIVATION,
  proposerAt,
} from '../../ts/chain/index.js';
import { chainCommon, decodeSignedEvmTransaction, storedEvmTransaction } from '../../ts/execution/index.js';
import {
  type KeyPair,
  keyPairFromMnemonic,
  privateKeyHex,
  signDigest,
  type SignedTransaction,
  signTransaction,
  BASE_PER_COIN,
} from '../../ts/ledger/index.js';
import { StateStore } from '../../ts/state/index.js';
import { openRocksStore, type KvStore } from '../../ts/storage/index.js';
import { fromHex, toHex } from '../../ts/util/index.js';
import { signTransfer } from './evm.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
export const GENESIS_TS = 1_700_000_000;
/** The clock every fixture chain reads: blocks are dated from here on. */
export const NOW = GENESIS_TS + 1_000;

export const alice = keyPairFromMnemonic(MNEMONIC, 0);
export const bob = keyPairFromMnemonic(MNEMONIC, 1);
/** Two validators; the schedule sorts them by address. */
export const validatorKeys = [keyPairFromMnemonic(MNEMONIC, 8), keyPairFromMnemonic(MNEMONIC, 9)];

export function fixtureParams(validators: KeyPair[] = validatorKeys): ChainParams {
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: GENESIS_TS,
    activation: PRESET_ACTIVATION.dev,
    validators: validators.map((k, i) => ({ address: k.address, public_key: toHex(k.publicKey), name: `v${i}` })),
    alloc: new Map([
      [alice.address, 1_000n * BASE_PER_COIN],
      [bob.address, 1_000n * BASE_PER_COIN],
    ]),
    evmHardfork: 'prague',
    epochLength: 3600,
  };
}

export async function openFixtureChain(dir: string, params = fixtureParams()): Promise<{ chain: Chain; db: KvStore }> {
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(params, db, 64);
  chain.now = () => NOW;
  await chain.open();
  return { chain, db };
}

/** The key scheduled to propose at height. */
export function proposerKey(params: ChainParams, height: number, keys: KeyPair[] = validatorKeys): KeyPair {
  const addr = proposerAt(params, new StateStore(), height)?.address;
  return keys.find((k) => k.address === addr) as KeyPair;
}

export function transfer(
  from: KeyPair,
  nonce: bigint,
  over: Partial<Parameters<typeof signTransaction>[0]> = {},
): SignedTransaction {
  return signTransaction(
    { from: from.address, to: bob.address, amount: 1_000n, fee: 10_000n, nonce, chain_id: 7120, timestamp: GENESIS_TS, ...over },
    from,
  );
}

/** A signed EIP-1559 value transfer in the node's stored form (fields derived from the raw bytes). */
export async function evmTransfer(
  from: KeyPair,
  nonce: number,
  to = bob.address,
  value = 10n ** 15n,
): Promise<SignedTransaction> {
  const raw = await signTransfer(`0x${privateKeyHex(from)}`, nonce, to, value);
  const bytes = fromHex(raw);
  return storedEvmTransaction(decodeSignedEvmTransaction(bytes, chainCommon(7120, 'prague')), bytes, GENESIS_TS);
}

/** A valid block at the head's next height (built, validated and then dropped again by `chain`). */
export async function validBlock(chain: Chain, txs: SignedTransaction[], ts = NOW): Promise<Block> {
  const key = proposerKey(chain.params, chain.height + 1);
  const p = await chain.propose(txs, key, ts);
  chain.abandon(p);
  return p.block;
}

/** Re-hash and re-sign a block after a test changed it, so only the rule under test is broken. */
export function reseal(b: Block, key: KeyPair, opts: { keepRoot?: boolean; keepCount?: boolean } = {}): Block {
  const out: Block = { ...b, tx_count: opts.keepCount ? b.tx_count : b.transactions.length };
  if (!opts.keepRoot) out.merkle_root = txMerkleRoot(out.transactions, out.version);
  out.hash = blockHash(headerOf(out));
  out.signature = toHex(signDigest(fromHex(out.hash), key.privateKey));
  return out;
}
