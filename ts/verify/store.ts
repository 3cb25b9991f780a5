/**
 * Verified contracts, durable: one JSON record per chain and address in RocksDB under P.verified
 * ('V' + chain id u32 + address -> record; storage/keys.ts), in the node's database or the standalone
 * service's own. Writes of one address are serialized, so the rule "a perfect match replaces a partial one,
 * never the reverse" holds between concurrent verifications.
 */
import { type KvStore, verifiedKey } from '../storage/index.js';
import type { MatchKind, VerificationRecord } from './interface.js';

const rank = (m: MatchKind | null): number => (m === 'perfect' ? 2 : m === 'partial' ? 1 : 0);
/** Runtime match first; between equal runtime matches, the better creation match. */
const score = (r: VerificationRecord): number => rank(r.runtimeMatch) * 3 + rank(r.creationMatch);

/** What storing a new result did. */
export type StoreOutcome = { stored: true; record: VerificationRecord } | { stored: false; existing: VerificationRecord };

export class VerificationStore {
  /** Last write per address (chain:address), so decisions see the previous write's result. */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(private readonly db: KvStore) {}

  async get(chainId: number, address: string): Promise<VerificationRecord | null> {
    const raw = await this.db.get(verifiedKey(chainId, address));
    return raw ? (JSON.parse(raw.toString('utf8')) as VerificationRecord) : null;
  }

  /** Delete the records of these addresses that `drop` selects (writes of one address stay serialized). */
  async forget(chainId: number, addresses: readonly string[], drop: (r: VerificationRecord) => boolean): Promise<void> {
    for (const address of addresses) {
      const key = `${chainId}:${address}`;
      const done = (this.writing.get(key) ?? Promise.resolve()).then(async () => {
        const existing = await this.get(chainId, address);
        if (existing && drop(existing)) await this.db.write([{ type: 'del', key: verifiedKey(chainId, address) }]);
      });
      const settled = done.catch(() => undefined);
      this.writing.set(key, settled);
      await done.finally(() => {
        if (this.writing.get(key) === settled) this.writing.delete(key);
      });
    }
  }

  /**
   * Store `record` unless the address already has an equal or better match: a perfect runtime match replaces a
   * partial one, never the reverse; between equal runtime matches a creation match found later is kept; of two
   * equal results the first stays, as in Sourcify.
   */
  putIfBetter(record: VerificationRecord): Promise<StoreOutcome> {
    const key = `${record.chainId}:${record.address}`;
    const previous = this.writing.get(key) ?? Promise.resolve();
    const next = previous.then(async (): Promise<StoreOutcome> => {
      const existing = await this.get(record.chainId, record.address);
      if (existing && score(existing) >= score(record)) return { stored: false, existing };
      await this.db.write([
        { type: 'put', key: verifiedKey(record.chainId, record.address), value: Buffer.from(JSON.stringify(record)) },
      ]);
      return { stored: true, record };
    });
    const settled = next.catch(() => undefined);
    this.writing.set(key, settled);
    void settled.then(() => {
      if (this.writing.get(key) === settled) this.writing.delete(key);
    });
    return next;
  }
}
