import test from 'ava';
import { DEV_MNEMONIC, keyPairFromMnemonic } from '../../ts/ledger/keys.js';
import {
  decodeTransaction,
  encodeTransaction,
  parseSignedTransaction,
  signTransaction,
  signingPayload,
} from '../../ts/ledger/transaction.js';
import { parseJsonExact, stringifyExact } from '../../ts/util/index.js';
import { checkIntegrity as checkTransactionIntegrity } from '../../ts/ledger/rules.js';

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
const bob = keyPairFromMnemonic(DEV_MNEMONIC, 1);

test('mnemonic accounts follow the Hardhat/Anvil convention', (t) => {
  t.is(alice.address, '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
  t.is(bob.address, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
});

test('signing payload: 8 sorted keys, compact JSON, exact integers beyond 2^53', (t) => {
  const payload = signingPayload({
    amount: 12345678901234567890n,
    chain_id: 7120,
    data: '',
    fee: 10000n,
    from_address: alice.address,
    nonce: 0n,
    timestamp: 1700000000,
    to_address: bob.address,
  });
  t.is(
    payload,
    `{"amount":12345678901234567890,"chain_id":7120,"data":"","fee":10000,"from":"${alice.address}","nonce":0,"timestamp":1700000000,"to":"${bob.address}"}`,
  );
});

test('a signed transaction round-trips through JSON and storage and passes integrity checks', (t) => {
  const tx = signTransaction(
    { from: alice.address, to: bob.address, amount: 2n ** 60n, fee: 10000n, nonce: 3n, chain_id: 7120 },
    alice,
  );
  const parsed = parseSignedTransaction(parseJsonExact(stringifyExact(tx)));
  t.deepEqual(parsed, tx);
  t.deepEqual(decodeTransaction(encodeTransaction(tx)), tx);
  t.notThrows(() => checkTransactionIntegrity(parsed, 7120));
  t.throws(() => checkTransactionIntegrity(parsed, 7119), { message: /wrong chain_id/ });
  t.throws(() => checkTransactionIntegrity({ ...parsed, amount: 1n }, 7120), { message: /txid does not match/ });
  t.throws(() => checkTransactionIntegrity({ ...parsed, public_key: Buffer.from(bob.publicKey).toString('hex') }, 7120), {
    message: /public_key does not derive/,
  });
});

test('shape errors are clear', (t) => {
  const tx = signTransaction({ from: alice.address, to: bob.address, amount: 1n, fee: 10000n, nonce: 0n, chain_id: 7120 }, alice);
  const json = parseJsonExact(stringifyExact(tx)) as Record<string, unknown>;
  t.throws(() => parseSignedTransaction({ ...json, amount: '5' }), { message: /amount must be a non-negative integer/ });
  t.throws(() => parseSignedTransaction({ ...json, amount: 2n ** 64n }), { message: /amount must be/ });
  t.throws(() => parseSignedTransaction({ ...json, amount: -1 }), { message: /amount must be/ });
  t.throws(() => parseSignedTransaction({ ...json, to_address: '0x12' }), { message: /to_address/ });
  const { fee: _f, ...noFee } = json;
  t.throws(() => parseSignedTransaction(noFee), { message: /missing field fee/ });
  t.throws(() => parseSignedTransaction([]), { message: /must be an object/ });
});
