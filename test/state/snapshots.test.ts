import test from 'ava';
import { StateStore, type StateChanges, keyBytes } from '../../ts/state/state-store.js';

const slot = (owner: number, n: number): string =>
  keyBytes(`\x03${String.fromCharCode(owner).repeat(20)}${'\x00'.repeat(31)}${String.fromCharCode(n)}`).toString('latin1');
const buf = (s: string) => Buffer.from(s);
const apply = (s: StateStore, entries: [string, string | null][]) => {
  const changes: StateChanges = new Map(entries.map(([k, v]) => [k, v === null ? null : buf(v)]));
  return s.applyChanges(changes);
};

test('a snapshot keeps reading the state it opened on while blocks are applied and reverted', (t) => {
  const s = new StateStore();
  apply(s, [
    ['a', 'a1'],
    ['b', 'b1'],
  ]);
  const snap = s.snapshot();
  apply(s, [
    ['a', 'a2'],
    ['c', 'c2'],
  ]);
  const undo = apply(s, [
    ['a', 'a3'],
    ['b', null],
  ]);
  t.is(s.get('a')?.toString(), 'a3');
  t.is(snap.get('a')?.toString(), 'a1');
  t.is(snap.get('b')?.toString(), 'b1');
  t.is(snap.get('c'), undefined);
  // An abandoned proposal's revert is one more change: the snapshot still sees its own state.
  s.revert(undo);
  t.is(snap.get('a')?.toString(), 'a1');
  const later = s.snapshot();
  t.is(later.get('a')?.toString(), 'a2');
  t.deepEqual(s.snapshotStats(), { open: 2, retained: 3 });
  snap.release();
  // Nothing applied after `later` opened: no record is needed any more.
  t.deepEqual(s.snapshotStats(), { open: 1, retained: 0 });
  later.release();
  later.release();
  t.deepEqual(s.snapshotStats(), { open: 0, retained: 0 });
  t.throws(() => snap.get('a'), { message: /after release/ });
  // With no snapshot open, applying keeps no records.
  apply(s, [['a', 'a4']]);
  t.deepEqual(s.snapshotStats(), { open: 0, retained: 0 });
});

test("a snapshot's storage keys of a contract are those it held then", (t) => {
  const s = new StateStore();
  apply(s, [
    [slot(7, 1), 'x'],
    [slot(7, 2), 'y'],
    [slot(8, 1), 'z'],
  ]);
  const snap = s.snapshot();
  apply(s, [
    [slot(7, 1), null],
    [slot(7, 3), 'w'],
  ]);
  const owner = '\x07'.repeat(20);
  t.deepEqual([...s.storageKeysOf(owner)].sort(), [slot(7, 2), slot(7, 3)].sort());
  t.deepEqual([...snap.storageKeysOf(owner)].sort(), [slot(7, 1), slot(7, 2)].sort());
  snap.release();
});
