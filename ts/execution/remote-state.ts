/**
 * The state as a call worker sees it: values fetched from the main thread by message, over the port the
 * call's task carries, and answered there from a StateSnapshot (call-pool.ts serves them). Values are
 * fetched once per call and kept; the EVM awaits every state read anyway, so a fetch is one more await.
 */
import type { MessagePort } from 'node:worker_threads';
import type { KeyStr } from '../state/state-store.js';
import { CallTimeoutError } from './deadline.js';
import type { EvmBaseState } from './state-adapter.js';

/** Worker -> main thread. */
export type StateRequest =
  | { op: 'get'; id: number; key: KeyStr }
  | { op: 'keys'; id: number; owner: string }
  | { op: 'hash'; id: number; height: number };

/** A request before its id is assigned (Omit over a union would merge its members). */
type NewRequest = { op: 'get'; key: KeyStr } | { op: 'keys'; owner: string } | { op: 'hash'; height: number };

/** Main thread -> worker: the answer to request `id`. `values` may hold more keys than asked (prefetch). */
export interface StateReply {
  id: number;
  values?: [KeyStr, Uint8Array | null][];
  keys?: KeyStr[];
  hash?: Uint8Array | null;
  error?: string;
}

/** The state view of a call worker was read without fetching the key first (a bug, not a state). */
export class RemoteStateError extends Error {
  readonly code = 'REMOTE_STATE';
}

const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export class RemoteStateView implements EvmBaseState {
  private readonly cache = new Map<KeyStr, Buffer | null>();
  private readonly waiting = new Map<number, { resolve: (r: StateReply) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  constructor(
    private readonly port: MessagePort,
    prefetched: readonly [KeyStr, Uint8Array | null][],
    private readonly deadline: number,
  ) {
    this.keep(prefetched);
    port.on('message', (r: StateReply) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.waiting.delete(r.id);
      if (r.error !== undefined) w.reject(new RemoteStateError(r.error));
      else w.resolve(r);
    });
  }

  private keep(values: readonly [KeyStr, Uint8Array | null][] | undefined): void {
    for (const [k, v] of values ?? []) this.cache.set(k, v === null ? null : asBuffer(v));
  }

  private request(req: NewRequest): Promise<StateReply> {
    if (Date.now() > this.deadline) throw new CallTimeoutError();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.port.postMessage({ ...req, id } as StateRequest);
    });
  }

  get(key: KeyStr): Buffer | undefined {
    const v = this.cache.get(key);
    if (v === undefined) throw new RemoteStateError('state key read before it was fetched');
    return v ?? undefined;
  }

  async fetch(key: KeyStr): Promise<void> {
    if (this.cache.has(key)) return;
    this.keep((await this.request({ op: 'get', key })).values);
    if (!this.cache.has(key)) this.cache.set(key, null);
  }

  async storageKeysOf(owner: string): Promise<ReadonlySet<KeyStr>> {
    return new Set((await this.request({ op: 'keys', owner })).keys ?? []);
  }

  async blockHash(height: number): Promise<Uint8Array | null> {
    return (await this.request({ op: 'hash', height })).hash ?? null;
  }

  close(): void {
    for (const w of this.waiting.values()) w.reject(new RemoteStateError('call ended'));
    this.waiting.clear();
    this.port.close();
  }
}
