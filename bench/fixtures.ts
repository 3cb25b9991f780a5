import { type ChainParams, PRESET_ACTIVATION } from '../ts/chain/params.js';
import { type KeyPair, keyPairFromPrivate } from '../ts/ledger/keys.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { BASE_PER_COIN } from '../ts/modules/kit/units.js';
import { toHex } from '../ts/util/hex.js';

/** A dev-rules chain (id 7120) with one validator and every sender funded with 1000 coins. */
export function benchChainParams(validator: KeyPair, senders: KeyPair[]): ChainParams {
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: 1_700_000_000,
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: validator.address, public_key: toHex(validator.publicKey), name: 'bench' }],
    alloc: new Map(senders.map((k) => [k.address, 1000n * BASE_PER_COIN])),
    evmHardfork: 'prague',
    epochLength: 3600,
  };
}

/** Deterministic sender keys (private key = i+1) so runs are comparable. */
export function senderKeys(n: number): KeyPair[] {
  return Array.from({ length: n }, (_, i) => keyPairFromPrivate((BigInt(i) + 1n).toString(16).padStart(64, '0')));
}

/** perSender transfers from each sender, nonces 0..perSender-1, interleaved by nonce. */
export function signedTransfers(keys: KeyPair[], perSender: number, chainId: number): SignedTransaction[] {
  const out: SignedTransaction[] = [];
  const to = `0x${'ab'.repeat(20)}`;
  for (let nonce = 0; nonce < perSender; nonce++) {
    for (const k of keys) {
      out.push(
        signTransaction(
          { from: k.address, to, amount: 1000n, fee: 10_000n, nonce: BigInt(nonce), chain_id: chainId, timestamp: 1_700_000_000 },
          k,
        ),
      );
    }
  }
  return out;
}
