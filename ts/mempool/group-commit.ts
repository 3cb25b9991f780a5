/** Where journal records go: `write` returns once the records are durable. */
export interface JournalSink {
  /**
   * Write one group after every group passed before (its place is taken when called, so writes may overlap);
   * durable once resolved.
   */
  write(records: readonly Buffer[]): Promise<void>;
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  /** When it was appended (performance.now()). */
  at: number;
}

/**
 * Collects appends and writes them as groups (one durable write per group): the appends of one turn of the
 * event loop go together. Up to
 * `maxInFlight` groups are written at once, so a slow write does not hold back the groups behind it; those
 * arriving while all slots are busy go together in the next one.
 *
 * Groups are answered in the order they were taken, each once it and every group before it are durable: a
 * crash can lose only a suffix of unanswered groups, never a group in front of an answered one (replay stops
 * at the first missing or torn record). A failed write fails its group and every group taken while it was
 * being written.
 */
export class GroupCommit {
  private queue: Buffer[] = [];
  private waiters: Waiter[] = [];
  /** A dispatch is queued for the appends in `queue`. */
  private scheduled = false;
  private inFlight = 0;
  /** Settles once every group taken so far is durable (rejects if one of them failed). */
  private answered: Promise<void> = Promise.resolve();
  /** An exclusive step is waiting or running: no group is taken meanwhile. */
  private barrier: Promise<unknown> | null = null;
  private idle: (() => void)[] = [];
  /** Groups written, records in them and milliseconds spent writing (bench, metrics). */
  groups = 0;
  records = 0;
  writeMs = 0;
  maxWriteMs = 0;
  /** Milliseconds from append to answer, summed over the records answered (what a submission waits). */
  waitMs = 0;

  constructor(
    private readonly sink: JournalSink,
    readonly maxInFlight = 2,
  ) {}

  append(record: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push(record);
      this.waiters.push({ resolve, reject, at: performance.now() });
      this.schedule();
    });
  }

  /**
   * At the end of this turn of the event loop, so the appends of every request the turn read go together (the
   * admissions append as they read their requests, before their signatures are checked in the same phase).
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.queue.length === 0 || this.inFlight >= this.maxInFlight || this.barrier) return;
    const batch = this.queue;
    const waiters = this.waiters;
    this.queue = [];
    this.waiters = [];
    this.inFlight++;
    const t0 = performance.now();
    const written = this.sink.write(batch).then(() => {
      const ms = performance.now() - t0;
      this.writeMs += ms;
      if (ms > this.maxWriteMs) this.maxWriteMs = ms;
      this.groups++;
      this.records += batch.length;
    });
    // Answered in order: after every group taken before it. A group taken while an earlier one was still
    // being written fails with it (its records may sit behind the failed ones, where replay stops).
    const answered = this.answered.then(() => written);
    this.answered = answered;
    answered.then(
      () => {
        const now = performance.now();
        for (const w of waiters) {
          this.waitMs += now - w.at;
          w.resolve();
        }
      },
      (err) => {
        for (const w of waiters) w.reject(err);
        // Groups taken from now on stand on their own (the sink writes them after a failure in a new file).
        if (this.answered === answered) this.answered = Promise.resolve();
      },
    );
    // The slot frees when this write ends, so the next group need not wait for older ones.
    written
      .catch(() => undefined)
      .then(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const wake of this.idle.splice(0)) wake();
        this.dispatch();
      });
  }

  private whenIdle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }

  /** Run `step` with no group being written (the groups taken before it are written first; later ones wait). */
  async exclusive<T>(step: () => Promise<T>): Promise<T> {
    while (this.barrier) await this.barrier.catch(() => undefined);
    const run = (async () => {
      await this.whenIdle();
      return step();
    })();
    this.barrier = run;
    try {
      return await run;
    } finally {
      this.barrier = null;
      this.dispatch();
    }
  }

  /** Resolves once everything appended so far is written (or failed). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight > 0 || this.scheduled || this.barrier) {
      await new Promise((r) => setImmediate(r));
    }
    await this.answered.catch(() => undefined);
  }
}
