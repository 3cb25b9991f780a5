import test from 'ava';
import { type StateChanges, StateOverlay, StateStore } from '../../ts/state/state-store.js';

const v = (s: string): Buffer => Buffer.from(s);
const snapshot = (c: StateChanges): [string, string | null][] => [...c].map(([k, x]) => [k, x === null ? null : x.toString()]);

function overlay(): StateOverlay {
  const store = new StateStore();
  store.applyChanges(
    new Map([
      ['base1', v('b1')],
      ['base2', v('b2')],
    ]),
  );
  const o = new StateOverlay(store);
  o.set('a', v('1'));
  o.delete('base1');
  o.set('b', v('2'));
  return o;
}

test('rollback restores the changes exactly (entries and their order) after sets, deletes and rewrites', (t) => {
  const o = overlay();
  const before = snapshot(o.changes);
  const mark = o.begin();
  o.set('a', v('x'));
  o.set('new', v('n'));
  o.set('new', v('n2'));
  o.delete('b');
  o.set('base1', v('again'));
  o.delete('base2');
  t.is(o.get('base1')?.toString(), 'again');
  t.is(o.get('base2'), undefined);
  o.rollback(mark);
  t.deepEqual(snapshot(o.changes), before);
  t.is(o.get('base1'), undefined);
  t.is(o.get('base2')?.toString(), 'b2');
  t.is(o.get('new'), undefined);
  // Writes after the sub-transaction are not journaled.
  o.set('later', v('l'));
  t.deepEqual(snapshot(o.changes), [...before, ['later', 'l']]);
});

test('keep leaves the writes as if made directly; nested sub-transactions roll back to their own mark', (t) => {
  const direct = overlay();
  direct.set('a', v('x'));
  direct.set('c', v('3'));
  const o = overlay();
  o.begin();
  o.set('a', v('x'));
  o.begin();
  o.set('c', v('3'));
  o.keep();
  o.keep();
  t.deepEqual(snapshot(o.changes), snapshot(direct.changes));

  const n = overlay();
  const before = snapshot(n.changes);
  const outer = n.begin();
  n.set('a', v('x'));
  const afterOuterWrite = snapshot(n.changes);
  const m = n.begin();
  n.set('a', v('y'));
  n.set('d', v('4'));
  n.rollback(m);
  t.deepEqual(snapshot(n.changes), afterOuterWrite);
  n.begin();
  n.set('e', v('5'));
  n.keep();
  n.rollback(outer); // the outer rollback also undoes the kept inner writes
  t.deepEqual(snapshot(n.changes), before);
});
