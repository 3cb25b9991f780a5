/**
 * Gossiped transactions' verdicts (issue 29, finding 8): a rule every node applies the same way (fee,
 * signature, encoding) is the sender's fault (REJECT, even when the fee is refused before the signature
 * is checked); a refusal that depends on this node's state is nobody's (IGNORE); admitted is ACCEPT.
 */
import { RLP } from '@ethereumjs/rlp';
import test from 'ava';
import { TX_TYPE_NATIVE, encodeTransaction, transactionFields } from '../../ts/ledger/index.js';
import { TxAdmission, DEFAULT_MEMPOOL_LIMITS, Mempool } from '../../ts/mempool/index.js';
import { PeerMisbehaviour } from '../../ts/network/index.js';
import { admitGossipedTransaction } from '../../ts/sync/tx-relay.js';
import { toHex } from '../../ts/util/index.js';
import { NOW, alice, openFixtureChain, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';

test('gossiped transactions: admitted is accept, a state refusal ignore, a stateless one or a variant reject', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const admission = new TxAdmission(fx.chain, new Mempool(DEFAULT_MEMPOOL_LIMITS));
  admission.now = () => NOW;
  const admit = (bytes: Uint8Array) => admitGossipedTransaction(admission, bytes);

  t.is(await admit(encodeTransaction(transfer(alice, 0n))), 'accept');
  t.is(await admit(encodeTransaction(transfer(alice, 1n))), 'accept');
  t.is(await admit(encodeTransaction(transfer(alice, 5n))), 'accept', 'a future nonce is queued');
  t.is(await admit(encodeTransaction(transfer(alice, 0n))), 'ignore', 'already in the pool');
  t.is(await admit(encodeTransaction(transfer(alice, 0n, { amount: 999_999_999_999_999n }))), 'ignore', 'balance');

  // A fee below the minimum with a random signature: the fee rule refuses it before the signature is
  // checked, and it is still the sender's fault (it used to be relayed as "normal under gossip").
  const cheap = { ...transfer(alice, 2n, { fee: 1n }), signature: toHex(Buffer.alloc(64, 7)) };
  await t.throwsAsync(admit(encodeTransaction(cheap)), { instanceOf: PeerMisbehaviour, message: /fee/ });
  const forged = { ...transfer(alice, 2n), signature: toHex(Buffer.alloc(64, 7)) };
  await t.throwsAsync(admit(encodeTransaction(forged)), { instanceOf: PeerMisbehaviour, message: /signature/ });

  // The same transaction with a leading zero byte in its amount: one value, a second encoding.
  const tx = transfer(alice, 2n);
  const fields = transactionFields(tx);
  fields[3] = Buffer.concat([Buffer.from([0]), fields[3]]);
  const variant = Buffer.concat([Buffer.from([TX_TYPE_NATIVE]), RLP.encode(fields)]);
  await t.throwsAsync(admit(variant), { instanceOf: PeerMisbehaviour, message: /canonical/ });
  const legacy = RLP.encode(transactionFields(tx));
  await t.throwsAsync(admit(legacy), { instanceOf: PeerMisbehaviour, message: /canonical/ });
  t.is(await admit(encodeTransaction(tx)), 'accept', 'the canonical encoding of the same transaction');
});
