/**
 * Entry point of the speculation worker threads (Piscina keeps them, pool.ts). Block shares do not go through
 * Piscina's task queue: its dispatch needs a turn of the main thread's event loop, which a block being executed
 * never gives, so a share would only start once the block is done. Each worker instead hands the main thread
 * a port of its own when it loads (a Piscina pool 'message'); the main thread posts shares on it synchronously
 * and the worker runs them one after the other (they share the worker's VM and state), results going back on
 * each share's own port (speculate.ts).
 */
import { MessageChannel, parentPort } from 'node:worker_threads';
import { PARALLEL_PORT, type SpeculationTask } from './protocol.js';
import { speculate } from './speculate.js';

const { port1, port2 } = new MessageChannel();
parentPort?.postMessage({ [PARALLEL_PORT]: port2 }, [port2]);
let queue: Promise<unknown> = Promise.resolve();
port1.on('message', (task: SpeculationTask) => {
  queue = queue.then(
    () => speculate(task),
    () => speculate(task),
  );
});

/** Piscina's task entry: unused by blocks (see above); answers that the worker is up. */
export default function speculationWorker(): boolean {
  return true;
}
