/**
 * The state as a call worker sees it: values fetched from the main thread by message and answered there
 * from the call's StateSnapshot (call-pool.ts serves them). Each worker thread has one channel to the main
 * thread, set up when it starts (call-worker.ts); requests name their call. Values are fetched once per
 * call and kept; the EVM awaits every state read anyway, so a fetch is one more await.
 */
import type { MessagePort } from 'node:worker_threads';
import type { KeyStr } from '../state/state-store.js';
import { CallTimeoutError } from './deadline.js';
import type { EvmBaseState } from './state-adapter.js';

/** Key of the message a call worker sends its state port in, when it starts. */
export const STATE_PORT = 'nativeCallStatePort';

/** What a request asks, before its call and id are set. */
type Ask = { op: 'get'; key: KeyStr } | { op: 'keys'; owner: string } | { op: 'hash'; height: number };

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
  readonly code = 'REMOTE_STATE';
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

  request(task: number, ask: Ask): Promise<StateReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { task, resolve, reject });
      this.port.postMessage({ ...ask, task, id } as StateRequest);
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
    if (v === undefined) throw new RemoteStateError('state key read before it was fetched');
    return v ?? undefined;
  }

  async fetch(key: KeyStr): Promise<void> {
    if (this.cache.has(key)) return;
    this.keep((await this.ask({ op: 'get', key })).values);
    if (!this.cache.has(key)) this.cache.set(key, null);
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
