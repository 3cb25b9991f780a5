/**
 * Entry point of the call worker threads (Piscina, started by call-pool.ts): one eth_call or
 * eth_estimateGas per task, its state read from the main thread's snapshot by message.
 */
import { type CallReply, type CallTask, runCallTask } from './call-task.js';

export default function callWorker(task: CallTask): Promise<CallReply> {
  return runCallTask(task);
}
