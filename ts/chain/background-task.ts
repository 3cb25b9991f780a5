/**
 * A step of work run in the background, one call at a time, again and again while it reports more work:
 * the history indexer (state-history.ts) runs this way after each block commit, off the commit path.
 */
import { StoreClosedError } from '../storage/index.js';

type Outcome = 'more' | 'idle' | 'retry';

/** The task was paused or its store closed while a caller waited for it to catch up. */
export class BackgroundTaskStoppedError extends Error {}

export class BackgroundTask {
  private queued: NodeJS.Immediate | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private pauses = 0;
  private stopped = false;
  /** The last step's failure (the task retries after `retryMs`); null once a step succeeds. */
  lastError: Error | null = null;

  /** `step` does one bounded piece of work and resolves true when more is left. */
  constructor(
    private readonly step: () => Promise<boolean>,
    private readonly retryMs = 1000,
  ) {}

  /** Run the step after the current turn of the event loop (nothing if it is already due, paused or stopped). */
  schedule(): void {
    if (this.queued || this.retryTimer || this.running || this.pauses > 0 || this.stopped) return;
    this.queued = setImmediate(() => {
      this.queued = null;
      if (this.running || this.pauses > 0 || this.stopped) return;
      void this.runOnce().then((outcome) => {
        if (outcome === 'more') this.schedule();
        else if (outcome === 'retry') this.retryLater();
      });
    });
  }

  /**
   * Run steps now until none is left (tests, benches, an orderly shutdown). Throws the step's error, or
   * BackgroundTaskStoppedError when the task is paused or its store closed.
   */
  async flush(): Promise<void> {
    for (;;) {
      while (this.running) await this.running;
      if (this.pauses > 0 || this.stopped) throw new BackgroundTaskStoppedError('background task paused or stopped');
      const outcome = await this.runOnce();
      if (outcome === 'idle') return;
      if (outcome === 'retry') throw this.lastError;
    }
  }

  /** Stop starting steps and wait for the one running; the returned function resumes (once). */
  async pause(): Promise<() => void> {
    this.pauses++;
    while (this.running) await this.running;
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.pauses--;
      this.schedule();
    };
  }

  /** Never run again (the store is closing); waits for a running step. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.queued) clearImmediate(this.queued);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.queued = null;
    this.retryTimer = null;
    while (this.running) await this.running;
  }

  private async runOnce(): Promise<Outcome> {
    let done!: () => void;
    this.running = new Promise((r) => {
      done = r;
    });
    try {
      const more = await this.step();
      this.lastError = null;
      return more ? 'more' : 'idle';
    } catch (err) {
      // The store closed under the task (the node stopping, a test closing its database): nothing left to do.
      if (err instanceof StoreClosedError) {
        this.stopped = true;
        return 'idle';
      }
      this.lastError = err as Error;
      return 'retry';
    } finally {
      this.running = null;
      done();
    }
  }

  private retryLater(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.schedule();
    }, this.retryMs);
    this.retryTimer.unref();
  }
}
