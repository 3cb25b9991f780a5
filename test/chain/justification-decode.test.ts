/**
 * Certificates decoded once: the same bytes in another object (a block's last_commit is its parent's
 * certificate, decoded from the wire again) give the same frozen decoding; other bytes decode on their own.
 */
import test from 'ava';
import { decodeJustification, encodeJustification } from '../../ts/chain/justification.js';

const certificate = (round: number) =>
  encodeJustification({
    round,
    precommits: [
      { validator: `0x${'11'.repeat(20)}`, signature: 'ab'.repeat(64) },
      { validator: `0x${'22'.repeat(20)}`, signature: 'cd'.repeat(64) },
    ],
  });

test('equal certificate bytes in another object decode to the same frozen value; other bytes decode afresh', (t) => {
  const bytes = certificate(0);
  const first = decodeJustification(bytes);
  const again = decodeJustification(Uint8Array.from(bytes));
  t.is(again, first);
  t.true(Object.isFrozen(first) && Object.isFrozen(first.precommits) && Object.isFrozen(first.precommits[0]));
  // The caller reusing its buffer does not change what was decoded from it.
  const reused = Uint8Array.from(bytes);
  t.is(decodeJustification(reused), first);
  reused.set(certificate(1).subarray(0, reused.length));
  const other = decodeJustification(Uint8Array.from(certificate(1)));
  t.is(other.round, 1);
  t.is(first.round, 0);
  t.is(decodeJustification(Uint8Array.from(bytes)).round, 0);
});
