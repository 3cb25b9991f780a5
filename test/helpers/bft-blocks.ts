/**
 * Finalized DPoS+BFT blocks made in the test process: four validators of the dev mnemonic (DPoS+BFT from
 * height 1), the scheduled proposer seals each block and three of four precommit it. What a syncing node
 * receives from its peers (test/chain/verify-ahead.test.ts, import-run.test.ts, bench/sync-import.ts).
 */
import {
  type Block,
  type Chain,
  PRECOMMIT,
  encodeJustification,
  voteDigest,
  type ChainParams,
  proposerAt,
} from '../../ts/chain/index.js';
import { type KeyPair, keyPairFromMnemonic, signDigest, type SignedTransaction } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { NOW, fixtureParams } from './chain-fixture.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
export const bftKeys = [4, 5, 6, 7].map((i) => keyPairFromMnemonic(MNEMONIC, i));
export const bftKeyOf = (address: string): KeyPair => bftKeys.find((k) => k.address === address) as KeyPair;

/** The four-validator chain; `network` other than dev imports runs in one write (a dev chain goes block by block). */
export function bftParams(network: ChainParams['network'] = 'dev'): ChainParams {
  return { ...fixtureParams(bftKeys), network };
}

/** A commit certificate of `b` by `signers` (sorted by address, as validators make it). */
export function certificate(params: ChainParams, b: Block, signers: KeyPair[]): Uint8Array {
  const precommits = signers
    .map((k) => {
      const body = { type: PRECOMMIT, height: b.index, round: 0, block_hash: b.hash } as const;
      return { validator: k.address, signature: toHex(signDigest(voteDigest(params.chainId, body), k.privateKey)) };
    })
    .sort((x, y) => (x.validator < y.validator ? -1 : 1));
  return encodeJustification({ round: 0, precommits });
}

/**
 * The next finalized block of `chain` (its scheduled proposer among `keys`, precommits of `signers`: three
 * of the four bftKeys by default), committed there.
 */
export async function nextFinalized(
  chain: Chain,
  txs: SignedTransaction[],
  evidence: Uint8Array[] = [],
  keys: KeyPair[] = bftKeys,
  signers: KeyPair[] = keys.slice(0, 3),
): Promise<Block> {
  const params = chain.params;
  const scheduled = proposerAt(params, chain.state, chain.height + 1, 0)?.address;
  const proposer = keys.find((k) => k.address === scheduled) as KeyPair;
  const lastCommit = chain.head.consensus === 'DPoS+BFT' ? chain.head.justification : new Uint8Array(0);
  const exec = await chain.execute(txs, proposer.address, NOW, undefined, { last_commit: lastCommit, evidence });
  const sealed = chain.seal(exec, proposer, 0, { proposal: true });
  chain.abandon(sealed);
  const final = { ...sealed.block, justification: certificate(params, sealed.block, signers) };
  await chain.importBlock(final);
  return final;
}
