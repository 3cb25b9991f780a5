/**
 * The admin audit log (GET /admin/log): configuration at start, authentication failures and admin actions,
 * persisted in RocksDB under prefix P.audit ('L' + seq u64 -> JSON entry) and trimmed to the newest
 * AUDIT_LOG_MAX_ENTRIES rows, so it survives restarts and never grows beyond that.
 */
import { type KvOp, type KvStore, P } from '../storage/index.js';
import { u64be, parseJsonExact, stringifyExact } from '../util/index.js';

/** Spec: "Audit log: rolling 10000 entries". */
export const AUDIT_LOG_MAX_ENTRIES = 10_000;
/** Entries returned by GET /admin/log when no limit is given. */
export const AUDIT_LOG_DEFAULT_PAGE = 100;
/** A detail serializing longer than this is stored as a truncated preview (callers may pass request data). */
export const AUDIT_DETAIL_MAX_CHARS = 4096;

export type AuditKind = 'config' | 'auth_failure' | 'admin_action';

export interface AuditEntry {
  /** Increasing from 1, never reused (also across restarts). */
  seq: number;
  /** Unix seconds. */
  time: number;
  kind: AuditKind;
  detail: Record<string, unknown>;
}

export interface AuditLogOptions {
  maxEntries?: number;
  /** A failed write (the entries of that batch are lost; the node keeps serving). */
  onError?: (err: unknown) => void;
  /** Unix milliseconds; injectable for tests. */
  now?: () => number;
}

const PREFIX = Buffer.from([P.audit]);
const auditKey = (seq: number): Buffer => Buffer.concat([PREFIX, u64be(seq)]);
const seqOfKey = (key: Buffer): number => Number(key.readBigUInt64BE(1));
const TABLE_END = Buffer.from([P.audit + 1]);

/**
 * Appends are synchronous for the caller (`record` never awaits or throws) and written in batches, one batch in
 * flight at a time; each batch also deletes the rows that fell out of the window. Reads flush first, so an
 * entry is visible as soon as `record` returned.
 */
export class AuditLog {
  private queue: KvOp[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  readonly maxEntries: number;
  private readonly now: () => number;

  private constructor(
    private readonly db: KvStore,
    /** Rows held: seqs first .. next-1. */
    private first: number,
    private next: number,
    private readonly opts: AuditLogOptions,
  ) {
    this.maxEntries = opts.maxEntries ?? AUDIT_LOG_MAX_ENTRIES;
    this.now = opts.now ?? Date.now;
  }

  /** Opens the log stored in db; trims it when it holds more than maxEntries rows (e.g. the limit was lowered). */
  static async open(db: KvStore, opts: AuditLogOptions = {}): Promise<AuditLog> {
    const maxEntries = opts.maxEntries ?? AUDIT_LOG_MAX_ENTRIES;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    const [firstRow] = await db.range({ gte: PREFIX, lt: TABLE_END, limit: 1 });
    const [lastRow] = await db.range({ gte: PREFIX, lt: TABLE_END, reverse: true, limit: 1 });
    const first = firstRow ? seqOfKey(firstRow[0]) : 1;
    const next = lastRow ? seqOfKey(lastRow[0]) + 1 : 1;
    const log = new AuditLog(db, first, next, opts);
    log.trim();
    if (log.queue.length > 0) log.schedule();
    await log.flush();
    return log;
  }

  /** Entries held (at most maxEntries). */
  get total(): number {
    return this.next - this.first;
  }

  /** Appends an entry; written shortly after (see flush). Never throws. After close the entry is dropped. */
  record(kind: AuditKind, detail: Record<string, unknown>): AuditEntry {
    const entry: AuditEntry = { seq: this.next, time: Math.floor(this.now() / 1000), kind, detail };
    if (this.closed) return entry;
    let text: string;
    try {
      text = stringifyExact(entry);
      if (text.length > AUDIT_DETAIL_MAX_CHARS) {
        const preview = stringifyExact(detail).slice(0, 1000);
        entry.detail = { truncated: true, preview };
        text = stringifyExact(entry);
      }
    } catch (err) {
      // e.g. a cyclic detail: keep the fact that something happened
      entry.detail = { unserializable: true, error: String(err) };
      text = stringifyExact(entry);
    }
    this.next++;
    this.queue.push({ type: 'put', key: auditKey(entry.seq), value: Buffer.from(text) });
    this.trim();
    this.schedule();
    return entry;
  }

  /** Newest first; `offset` skips that many of the newest. */
  async list(limit = AUDIT_LOG_DEFAULT_PAGE, offset = 0): Promise<{ entries: AuditEntry[]; total: number }> {
    await this.flush();
    const top = this.next - offset; // exclusive
    if (limit <= 0 || top <= this.first) return { entries: [], total: this.total };
    const rows = await this.db.range({ gte: auditKey(this.first), lt: auditKey(top), reverse: true, limit });
    const entries: AuditEntry[] = [];
    for (const [, value] of rows) {
      try {
        entries.push(parseJsonExact(value.toString('utf8')) as AuditEntry);
      } catch {
        // a damaged row is skipped rather than failing the whole page
      }
    }
    return { entries, total: this.total };
  }

  /** Resolves once every entry recorded so far is written (or its write failed and was reported). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Writes what is queued; later records are dropped. Call before closing the database. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private trim(): void {
    while (this.next - this.first > this.maxEntries) {
      this.queue.push({ type: 'del', key: auditKey(this.first) });
      this.first++;
    }
  }

  private schedule(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      // Let records of the same synchronous run join one batch.
      await Promise.resolve();
      try {
        while (this.queue.length > 0) {
          const ops = this.queue;
          this.queue = [];
          try {
            await this.db.write(ops);
          } catch (err) {
            this.opts.onError?.(err);
          }
        }
      } finally {
        this.flushing = null;
      }
    })();
  }
}

/** Keys whose values never go into the audit log or any log line. */
const SECRET_KEY = /key|secret|token|password|mnemonic|private/i;

/** A copy of a configuration object fit for the audit log: secrets replaced by "[redacted]", unset values dropped. */
export function redactConfig(config: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    if (v === undefined) continue;
    out[k] = SECRET_KEY.test(k) ? '[redacted]' : v;
  }
  return out;
}
