import test from 'ava';
import type { SnapshotOffer } from '../../ts/network/index.js';
import { chooseSnapshot, parseStateSyncTrust, trustedBlockOnly } from '../../ts/sync/snapshot-choice.js';

const h = (c: string) => c.repeat(64);
const offer = (height: number, id = h('1'), block = h(String(height % 10))): SnapshotOffer => ({
  height,
  block_hash: block,
  state_root: h('e'),
  id,
  chunks: 3,
});

test('--state-sync-trust HEIGHT:HASH is parsed strictly', (t) => {
  t.deepEqual(parseStateSyncTrust(`100:0x${'AB'.repeat(32)}`), { height: 100, hash: 'ab'.repeat(32) });
  t.deepEqual(parseStateSyncTrust(` 7:${'cd'.repeat(32)} `), { height: 7, hash: 'cd'.repeat(32) });
  for (const bad of [
    '',
    '100',
    `0:${'ab'.repeat(32)}`,
    `-1:${'ab'.repeat(32)}`,
    `x:${'ab'.repeat(32)}`,
    `5:${'ab'.repeat(31)}`,
    `5:${'zz'.repeat(32)}`,
  ])
    t.throws(() => parseStateSyncTrust(bad), { message: /--state-sync-trust must be HEIGHT:HASH/ }, bad);
});

test('the newest snapshot offered alike by two peers and verifiable is chosen', (t) => {
  const all = () => true;
  const offers = new Map<string, SnapshotOffer[]>([
    ['a', [offer(30), offer(20)]],
    ['b', [offer(30, h('2')), offer(20)]], // 30 with another id: no agreement on 30
    ['c', [offer(40)]], // newest, but offered by one peer only
    ['d', [offer(20), offer(10)]],
  ]);
  const chosen = chooseSnapshot(offers, all);
  t.is(chosen?.offer.height, 20);
  t.deepEqual(chosen?.peers, ['a', 'b', 'd']);
  t.is(chooseSnapshot(offers, all, 4), null, 'no snapshot offered by four peers');
  t.is(chooseSnapshot(offers, all, 1)?.offer.height, 40, 'one peer suffices when asked');
  // A peer listing the same offer twice counts once.
  t.is(chooseSnapshot(new Map([['a', [offer(50), offer(50)]]]), all), null);
  // Only the trusted block's snapshot is verifiable without a light client.
  t.is(chooseSnapshot(offers, trustedBlockOnly({ height: 10, hash: h('0') })), null, 'height 10 is offered by d alone');
  t.is(chooseSnapshot(offers, trustedBlockOnly({ height: 20, hash: h('0') }))?.offer.height, 20);
  t.is(chooseSnapshot(offers, trustedBlockOnly({ height: 20, hash: h('9') })), null, 'another block at the trusted height');
});
