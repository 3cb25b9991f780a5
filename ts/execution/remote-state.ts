/**
 * The state as an EVM worker sees it: values fetched from the main thread by message and answered there
 * from the task's state view (worker-pool.ts serves them). Each worker thread has one channel to the main
 * thread, set up when it starts (evm-worker.ts); requests name their task. Values are fetched once per
 * task and kept; the EVM awaits every state read anyway, so a fetch is one more await. A trace also sends
 * its streamed struct logs over the channel: each chunk is a request whose reply is the main thread's
 * "ready for more" (back-pressure).
 */
import type { MessagePort } from 'node:worker_threads';
import type { KeyStr } from '../state/index.js';
import { CallTimeoutError } from './deadline.js';
import type { EvmBaseState } from './state-adapter.js';

/** Key of the message an EVM worker sends its state port in, when it starts. */
export const STATE_PORT = 'nativeCallStatePort';

/** What a request asks, before its task and id are set. */
export type Ask =
  | { op: 'get'; key: KeyStr }
  /** Several values in one round trip (the keys a native operation read before it stopped, see MissingStateError). */
  | { op: 'many'; keys: KeyStr[] }
  | { op: 'keys'; owner: string }
  | { op: 'hash'; height: number }
  /** A chunk of streamed struct-log text; the reply comes when the consumer can take more. */
  | { op: 'chunk'; bytes: Uint8Array };

/** Worker -> main thread: `task` names the call (its snapshot), `id` the request. */
export type StateRequest = Ask & { task: number; id: number };

/** Main thread -> worker: the answer to request `id`. `values` may hold more keys than asked (prefetch). */
export interface StateReply {
  id: number;
  values?: [KeyStr, Uint8Array | null][];
  keys?: KeyStr[];
  hash?: Uint8Array | null;
  error?: string;
}

/** A state read failed on the main thread (its call is over, or a bug). */
export class RemoteStateError extends Error {
  readonly code: string = 'REMOTE_STATE';
}

/**
 * A synchronous read of a key not fetched yet (native operations and tracers read state synchronously): the
 * caller fetches the keys the view recorded as missing and runs the read again (RemoteStateView.runSync).
 * One shared instance: a struct-log trace meets one per SLOAD of a new slot, and an error's stack trace
 * costs more than the rest of the step.
 */
export class MissingStateError extends RemoteStateError {
  override readonly code = 'MISSING_STATE';
  static readonly instance = new MissingStateError('state key read before it was fetched');
}

type Waiter = { task: number; resolve: (r: StateReply) => void; reject: (e: Error) => void };

/** A worker thread's channel to the main thread's snapshots. */
export class StateChannel {
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;

  constructor(private readonly port: MessagePort) {
    port.on('message', (r: StateReply) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.waiting.delete(r.id);
      if (r.error !== undefined) w.reject(new RemoteStateError(r.error));
      else w.resolve(r);
    });
  }

  /** `transfer`: buffers moved to the main thread instead of copied (a chunk's text). */
  request(task: number, ask: Ask, transfer?: ArrayBuffer[]): Promise<StateReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { task, resolve, reject });
      this.port.postMessage({ ...ask, task, id } as StateRequest, transfer);
    });
  }

  /** Rejects what a finished call still waits for. */
  forget(task: number): void {
    for (const [id, w] of this.waiting) {
      if (w.task !== task) continue;
      this.waiting.delete(id);
      w.reject(new RemoteStateError('call ended'));
    }
  }
}

const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export class RemoteStateView implements EvmBaseState {
  private readonly cache = new Map<KeyStr, Buffer | null>();
  /** Keys read synchronously before they were fetched, since the last fetchMissing(). */
  private readonly missing = new Set<KeyStr>();
  /** Inside runSync: a read of a key not fetched answers "absent" (and is recorded) instead of throwing. */
  private speculating = false;

  constructor(
    private readonly channel: StateChannel,
    private readonly task: number,
    prefetched: readonly [KeyStr, Uint8Array | null][],
    private readonly deadline: number,
  ) {
    this.keep(prefetched);
  }

  private keep(values: readonly [KeyStr, Uint8Array | null][] | undefined): void {
    for (const [k, v] of values ?? []) this.cache.set(k, v === null ? null : asBuffer(v));
  }

  private ask(ask: Ask): Promise<StateReply> {
    if (Date.now() > this.deadline) throw new CallTimeoutError();
    return this.channel.request(this.task, ask);
  }

  get(key: KeyStr): Buffer | undefined {
    const v = this.cache.get(key);
    if (v === undefined) {
      this.missing.add(key);
      if (this.speculating) return undefined;
      throw MissingStateError.instance;
    }
    return v ?? undefined;
  }

  /** Fetches, in one round trip, the keys read before they were fetched; false when there were none. */
  async fetchMissing(): Promise<boolean> {
    if (this.missing.size === 0) return false;
    const keys = [...this.missing];
    this.missing.clear();
    this.keep((await this.ask({ op: 'many', keys })).values);
    for (const k of keys) if (!this.cache.has(k)) this.cache.set(k, null);
    return true;
  }

  async fetch(key: KeyStr): Promise<void> {
    if (this.cache.has(key)) return;
    this.keep((await this.ask({ op: 'get', key })).values);
    if (!this.cache.has(key)) this.cache.set(key, null);
  }

  /**
   * Runs `fn` with every key it reads at hand. Each run records the keys it read before they were fetched
   * (reading them as absent, so one run finds all it can); they are fetched in one round trip and `fn`
   * runs again, until a run misses nothing. Each round fetches at least one new key, so it ends.
   */
  async runSync<T>(fn: () => T): Promise<T> {
    for (;;) {
      let out: { value: T } | { error: unknown };
      this.speculating = true;
      try {
        out = { value: fn() };
      } catch (error) {
        out = { error };
      } finally {
        this.speculating = false;
      }
      if (await this.fetchMissing()) continue;
      if ('error' in out) throw out.error;
      return out.value;
    }
  }

  async storageKeysOf(owner: string): Promise<ReadonlySet<KeyStr>> {
    return new Set((await this.ask({ op: 'keys', owner })).keys ?? []);
  }

  async blockHash(height: number): Promise<Uint8Array | null> {
    return (await this.ask({ op: 'hash', height })).hash ?? null;
  }

  close(): void {
    this.channel.forget(this.task);
  }
}
