/**
 * Entry point of the compile worker threads (Piscina, started by compile-pool.ts): one compilation per task.
 * The thread keeps the compilers it loaded (compile-task.ts) until the pool retires it when idle.
 */
import { type CompileReply, type CompileTask, runCompile } from './compile-task.js';

export default function compileWorker(task: CompileTask): CompileReply {
  return runCompile(task);
}
