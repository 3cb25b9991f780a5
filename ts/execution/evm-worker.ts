/**
 * Entry point of the EVM worker threads (Piscina, started by worker-pool.ts for the call pool and the trace
 * pool): one eth_call / eth_estimateGas or one trace per task, its state read from the main thread's view by
 * message. When the thread loads this module it hands the main thread one end of its state channel (a
 * Piscina pool 'message'), before Piscina reports the worker ready, so no task arrives before the channel is there.
 */
import { MessageChannel, parentPort } from 'node:worker_threads';
import { workerData } from 'piscina';
import { type CallReply, type CallTask, runCallTask } from './call-task.js';
import { STATE_PORT, StateChannel } from './remote-state.js';
import { type TraceReply, type TraceTask, runTraceTask } from './trace/task.js';

const { port1, port2 } = new MessageChannel();
parentPort?.postMessage({ [STATE_PORT]: port2 }, [port2]);
const channel = new StateChannel(port1);

export default function evmWorker(task: CallTask | TraceTask): Promise<CallReply | TraceReply> {
  return task.type === 'trace' ? runTraceTask(task, channel) : runCallTask(task, channel);
}

/**
 * Niceness an EVM worker adds to itself once loaded (its pool's `niceIncrement`, worker-pool.ts): call workers
 * take +10, so contract code yields the CPU to the main thread (HTTP, block production) when cores are short;
 * a nice +10 thread gets about a tenth of a nice 0 one's share. Loading ran at full priority, so a busy
 * machine does not stretch the first call's wait. Piscina's niceIncrement would lower it before loading;
 * @napi-rs/nice (Piscina's optional dependency) does it here.
 */
const niceIncrement = (workerData as { niceIncrement?: number } | undefined)?.niceIncrement ?? 0;
const NICE_MODULE = '@napi-rs/nice';
if (niceIncrement > 0) {
  try {
    const { nice } = (await import(NICE_MODULE)) as { nice(increment: number): number };
    nice(niceIncrement);
  } catch {
    // Not installed or not supported here (Windows): the worker runs at the main thread's priority.
  }
}
