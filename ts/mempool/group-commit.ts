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
}

/**
 * Collects appends and writes them as groups (one durable write per group): the appends made while one
 * callback's promise continuations run go together (a batch of admissions resolves in one such run). Up to
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

  constructor(
    private readonly sink: JournalSink,
    readonly maxInFlight = 2,
  ) {}

  append(record: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push(record);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /**
   * After the current run of promise continuations (the rest of the batch appends in it), not a turn of the
   * event loop later: the answers of the group wait for this write, so it starts as soon as it can.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => {
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
        for (const w of waiters) w.resolve();
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
