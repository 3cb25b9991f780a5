import test from 'ava';
import { StopStack } from '../../ts/node/build/stops.js';

test('StopStack: stops run last first, once each; parts without a stop are handed back untouched', async (t) => {
  const stops = new StopStack();
  const ran: string[] = [];
  const db = stops.take('database', { db: 'kv', stop: () => void ran.push('database') });
  const plain = stops.take('metrics', { metrics: 1 });
  stops.take('api', {
    stop: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      ran.push('api');
    },
  });
  stops.take('production', { stop: () => void ran.push('production') });
  t.is(db.db, 'kv');
  t.deepEqual(plain, { metrics: 1 });
  await stops.unwind(() => t.fail('no stop fails'));
  t.deepEqual(ran, ['production', 'api', 'database']);
  // A second unwind (a stop after a failed start, say) runs nothing again.
  await stops.unwind(() => t.fail('no stop fails'));
  t.deepEqual(ran, ['production', 'api', 'database']);
});

test('StopStack: a failing stop is reported, the others still run, and the first failure is thrown at the end', async (t) => {
  const stops = new StopStack();
  const ran: string[] = [];
  const reported: string[] = [];
  stops.take('database', { stop: () => void ran.push('database') });
  stops.take('journal', {
    stop: () => {
      throw new Error('journal flush failed');
    },
  });
  stops.take('grpc', {
    stop: async () => {
      throw new Error('grpc close failed');
    },
  });
  stops.take('network', { stop: () => void ran.push('network') });
  const err = await t.throwsAsync(stops.unwind((e, name) => reported.push(`${name}: ${(e as Error).message}`)));
  t.is(err?.message, 'grpc close failed');
  t.deepEqual(ran, ['network', 'database']);
  t.deepEqual(reported, ['grpc: grpc close failed', 'journal: journal flush failed']);
});
