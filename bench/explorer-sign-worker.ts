/**
 * Worker of bench/explorer.ts: signs the native transfers of a range of the large chain. The transaction rules'
 * signature is ECDSA secp256k1 over SHA-256 of the signing payload, which is what OpenSSL's
 * `crypto.sign('sha256', payload)` computes (about 20x faster than the JS signer); the result is put in the
 * node's compact low-S form, so block validation verifies it like any other signature.
 */
import { type KeyObject, createHash, createPrivateKey, sign } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { keyPairFromPrivate } from '../ts/ledger/keys.js';
import { type SignedTransaction, signingPayload } from '../ts/ledger/transaction.js';
import { type ChainShape, transferAt } from './explorer-shape.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');

interface Signer {
  address: string;
  publicKey: string;
  key: KeyObject;
}

const signers = new Map<number, Signer>();
function signerOf(i: number): Signer {
  let s = signers.get(i);
  if (!s) {
    const k = keyPairFromPrivate((BigInt(i) + 1n).toString(16).padStart(64, '0'));
    const pub = k.publicKey; // 65 bytes, 0x04 || x || y
    const key = createPrivateKey({
      key: { kty: 'EC', crv: 'secp256k1', d: b64url(k.privateKey), x: b64url(pub.subarray(1, 33)), y: b64url(pub.subarray(33)) },
      format: 'jwk',
    });
    signers.set(i, (s = { address: k.address, publicKey: Buffer.from(pub).toString('hex'), key }));
  }
  return s;
}

function signCompactLowS(payload: string, key: KeyObject): string {
  const sig = sign('sha256', Buffer.from(payload, 'utf8'), { key, dsaEncoding: 'ieee-p1363' });
  const s = BigInt(`0x${sig.subarray(32).toString('hex')}`);
  const low = s > N / 2n ? N - s : s;
  return sig.subarray(0, 32).toString('hex') + low.toString(16).padStart(64, '0');
}

parentPort?.on('message', (m: { shape: ChainShape; from: number; to: number }) => {
  const out: SignedTransaction[] = [];
  for (let k = m.from; k < m.to; k++) {
    const t = transferAt(m.shape, k);
    const s = signerOf(t.sender);
    const body = {
      from_address: s.address,
      to_address: t.to,
      amount: t.amount,
      fee: t.fee,
      nonce: t.nonce,
      data: '',
      timestamp: t.timestamp,
      chain_id: t.chain_id,
    };
    const payload = signingPayload(body);
    out.push({
      ...body,
      txid: createHash('sha256').update(payload).digest('hex'),
      signature: signCompactLowS(payload, s.key),
      public_key: s.publicKey,
    });
  }
  parentPort?.postMessage(out);
});
