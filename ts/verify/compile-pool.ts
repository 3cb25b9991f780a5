/**
 * Compilation off the main thread: a Piscina pool of compile workers (compile-worker.ts), so a verification
 * never holds up JSON-RPC or block production. Bounded: `workers` compilations run at once, `maxQueue` more
 * wait; beyond that compile() refuses at once. Each compilation has a time limit (queueing included) and a
 * memory limit: the worker's JS heap is capped (resourceLimits), and since solc's WebAssembly memory lives
 * outside that heap, a watchdog stops the compilations when the process grows by more than the limit while
 * they run. A stopped worker is terminated (Piscina replaces it on the next task).
 */
import { Piscina } from 'piscina';
import { goDuration } from '../util/index.js';
import type { CompileReply, CompileTask, CompiledContract } from './compile-task.js';
import { CompilationFailedError, CompilationLimitError, CompilerNotAvailableError, VerifierBusyError } from './errors.js';

export const DEFAULT_COMPILE_TIMEOUT_MS = 60_000;
export const DEFAULT_COMPILE_MEMORY_MB = 1024;
export const DEFAULT_COMPILE_WORKERS = 1;
export const DEFAULT_COMPILE_QUEUE = 16;
/** A worker idle this long ends (its loaded compilers with it); the next verification loads solc again (~0.5 s). */
export const COMPILER_IDLE_MS = 10 * 60_000;
/** How often the memory watchdog samples the process while compilations run. */
const WATCHDOG_MS = 100;

export interface CompilePoolOptions {
  workers?: number;
  maxQueue?: number;
  timeoutMs?: number;
  memoryMb?: number;
  /** A worker failed outside a task (it is replaced). */
  onError?: (err: unknown) => void;
}

interface Running {
  abort: AbortController;
  /** Process resident size when the compilation started. */
  rssAtStart: number;
  reason?: 'time' | 'memory';
}

export class CompilePool {
  private pool: Piscina | null = null;
  private pending = 0;
  private finished = 0;
  private readonly running = new Set<Running>();
  private watchdog: NodeJS.Timeout | null = null;
  readonly workers: number;
  readonly maxQueue: number;
  readonly timeoutMs: number;
  readonly memoryMb: number;

  constructor(private readonly opts: CompilePoolOptions = {}) {
    this.workers = opts.workers ?? DEFAULT_COMPILE_WORKERS;
    this.maxQueue = opts.maxQueue ?? DEFAULT_COMPILE_QUEUE;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_COMPILE_TIMEOUT_MS;
    this.memoryMb = opts.memoryMb ?? DEFAULT_COMPILE_MEMORY_MB;
  }

  /** Compilations running or queued now. */
  get inFlight(): number {
    return this.pending;
  }

  /** Compilations ended (done or failed) since the pool was made. */
  get completed(): number {
    return this.finished;
  }

  /** Started on first use: a node nobody verifies on spawns no thread and loads no compiler. */
  private piscina(): Piscina {
    if (!this.pool) {
      this.pool = new Piscina({
        filename: new URL('./compile-worker.js', import.meta.url).href,
        minThreads: 0,
        maxThreads: this.workers,
        idleTimeout: COMPILER_IDLE_MS,
        concurrentTasksPerWorker: 1,
        resourceLimits: { maxOldGenerationSizeMb: this.memoryMb },
      });
      this.pool.on('error', (err: unknown) => this.opts.onError?.(err));
    }
    return this.pool;
  }

  /** Compile on a worker; the compiler's and the limits' failures come back as VerifyErrors. */
  async compile(task: CompileTask): Promise<CompiledContract> {
    if (this.pending >= this.workers + this.maxQueue) throw new VerifierBusyError(this.workers + this.maxQueue);
    this.pending++;
    const run: Running = { abort: new AbortController(), rssAtStart: process.memoryUsage.rss() };
    const timer = setTimeout(() => {
      run.reason = 'time';
      run.abort.abort();
    }, this.timeoutMs);
    this.running.add(run);
    this.watch();
    let reply: CompileReply;
    try {
      reply = (await this.piscina().run(task, { signal: run.abort.signal })) as CompileReply;
    } catch (err) {
      throw this.failure(run, err);
    } finally {
      clearTimeout(timer);
      this.running.delete(run);
      this.pending--;
      this.finished++;
    }
    if (reply.kind === 'compile-error') throw new CompilationFailedError(reply.message);
    if (reply.kind === 'compiler-error') throw new CompilerNotAvailableError(reply.message);
    return reply.contract;
  }

  private failure(run: Running, err: unknown): Error {
    if (run.reason === 'time')
      return new CompilationLimitError(`compilation stopped: it ran past the time limit of ${goDuration(this.timeoutMs)}`);
    const code = (err as { code?: string }).code;
    if (run.reason === 'memory' || code === 'ERR_WORKER_OUT_OF_MEMORY')
      return new CompilationLimitError(`compilation stopped: it used more than the memory limit of ${this.memoryMb} MB`);
    return err as Error;
  }

  /** Sample the process while compilations run; stop them all when it grew past the limit. */
  private watch(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => {
      if (this.running.size === 0) {
        clearInterval(this.watchdog!);
        this.watchdog = null;
        return;
      }
      const rss = process.memoryUsage.rss();
      const limit = this.memoryMb * 1024 * 1024;
      for (const run of this.running) {
        if (rss - run.rssAtStart > limit && !run.reason) {
          run.reason = 'memory';
          run.abort.abort();
        }
      }
    }, WATCHDOG_MS);
    this.watchdog.unref();
  }

  async close(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    const p = this.pool;
    this.pool = null;
    await p?.destroy();
  }
}
