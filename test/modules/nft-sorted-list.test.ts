import test from 'ava';
import { SortedList } from '../../ts/modules/nft/sorted-list.js';

test('SortedList: adds, deletes and positional slices agree with a sorted array across chunk splits and merges', (t) => {
  const list = new SortedList();
  const model = new Set<string>();
  let seed = 42;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const key = () => Buffer.from([rnd(256), rnd(256), rnd(256)]).toString('latin1');
  for (let step = 0; step < 20_000; step++) {
    const k = key();
    if (rnd(3) === 0) t.is(list.delete(k), model.delete(k));
    else {
      const fresh = !model.has(k);
      model.add(k);
      t.is(list.add(k), fresh);
    }
    if (step % 2_000 === 0 || step === 19_999) {
      const sorted = [...model].sort();
      t.is(list.size, sorted.length);
      t.deepEqual([...list], sorted);
      for (const offset of [0, 1, 511, 512, 1023, 1024, 1025, Math.max(0, sorted.length - 3), sorted.length + 5]) {
        t.deepEqual(list.slice(offset, 7), sorted.slice(offset, offset + 7), `offset ${offset}`);
      }
      t.true(sorted.every((x) => list.has(x)));
    }
  }
  t.true(model.size > 2_048, 'the list spans several chunks');
  for (const k of [...model]) list.delete(k);
  t.is(list.size, 0);
  t.deepEqual(list.slice(0, 10), []);
  t.false(list.has('x'));
});
