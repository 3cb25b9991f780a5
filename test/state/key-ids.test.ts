import test from 'ava';
import { PairKeyCache, id20, nsKey } from '../../ts/state/key-ids.js';

const addr = (i: number): string => `0x${i.toString(16).padStart(40, '0')}`;
const raw = (a: string): string => Buffer.from(a.slice(2), 'hex').toString('latin1');

test('cached namespace keys and pair keys equal the keys built by concatenation, also after the caches fill', (t) => {
  const pairs = new PairKeyCache((a, b) => `P${id20(a)}${id20(b)}`);
  // More ids than the caches keep (65,536 keys, 262,144 ids): they are emptied and refilled on the way.
  for (let i = 0; i < 300_000; i++) {
    const a = addr(i);
    const b = addr(i % 7);
    if (nsKey('\x01', a) !== `\x01${raw(a)}`) return t.fail(`nsKey ${a}`);
    if (pairs.get(b, a) !== `P${raw(b)}${raw(a)}`) return t.fail(`pair ${b} ${a}`);
  }
  t.is(nsKey('\x01', addr(5)), `\x01${raw(addr(5))}`);
  t.is(nsKey('\x02', addr(5)), `\x02${raw(addr(5))}`, 'one cache per namespace');
  t.is(pairs.get(addr(3), addr(299_999)), `P${raw(addr(3))}${raw(addr(299_999))}`);
});
