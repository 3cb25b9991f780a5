/**
 * The contract-creation index: the transaction that created a contract (one without recipient; contracts
 * made by other contracts are not indexed), by the contract's address, written in each block's batch (a
 * BlockStore contributor).
 */
import type { ReceiptRecord } from '../execution/index.js';
import { ZERO_ADDRESS } from '../ledger/index.js';
import { type KvBatch, type KvStore, addrTxPrefix, creationKey, metaKey } from '../storage/index.js';
import { toHex, u64be } from '../util/index.js';
import type { Block } from './block.js';
import { postingLocations } from './address-index.js';
import {
  type BlockIndexContributor,
  type DroppedIndex,
  type RemovedBlock,
  type TxLocation,
  readTxLocation,
  txLocationValue,
} from './block-index.js';

/** First height whose contract creations the index holds (databases written before it existed). */
const CREATION_INDEX_FROM = metaKey('creation-index-from');
/** Postings per read when an older database's creations are searched. */
const SCAN_CHUNK = 256;

export class ContractCreations implements BlockIndexContributor {
  private indexFrom = 0;

  constructor(
    private readonly db: KvStore,
    /** Receipts of a stored block (the store's reader): a search of older blocks reads them. */
    private readonly receipts: (height: number) => Promise<readonly ReceiptRecord[] | null>,
  ) {}

  async open(head: number): Promise<void> {
    const from = await this.db.get(CREATION_INDEX_FROM);
    if (from) this.indexFrom = Number(from.readBigUInt64BE(0));
    else {
      // Blocks from the next one on are indexed; older creations are found by a scan (find).
      this.indexFrom = head + 1;
      await this.db.write([{ type: 'put', key: CREATION_INDEX_FROM, value: u64be(this.indexFrom) }]);
    }
  }

  stage(batch: KvBatch, block: Block, receipts: readonly ReceiptRecord[]): undefined {
    receipts.forEach((r, i) => {
      if (r.contractAddress) batch.put(creationKey(toHex(r.contractAddress)), txLocationValue(block.index, i));
    });
    return undefined;
  }

  drop(removed: readonly RemovedBlock[]): DroppedIndex {
    return {
      ops: removed.flatMap(({ receipts }) =>
        receipts.flatMap((r) =>
          r.contractAddress ? [{ type: 'del' as const, key: creationKey(toHex(r.contractAddress)) }] : [],
        ),
      ),
    };
  }

  /**
   * The transaction that created the contract at address, or null. Blocks written before the index existed are
   * searched through the zero address's history (where creations are listed), oldest first.
   */
  async find(address: string): Promise<TxLocation | null> {
    const raw = await this.db.get(creationKey(address));
    if (raw) return readTxLocation(raw);
    if (this.indexFrom === 0) return null;
    const target = address.toLowerCase().replace(/^0x/, '');
    const prefix = addrTxPrefix(ZERO_ADDRESS);
    const end = Buffer.concat([prefix, u64be(this.indexFrom)]);
    let gte = prefix;
    for (;;) {
      const rows = await this.db.range({ gte, lt: end, limit: SCAN_CHUNK });
      for (const [k, v] of rows) {
        for (const loc of postingLocations(k, v)) {
          const r = (await this.receipts(loc.height))?.[loc.index];
          if (r?.contractAddress && toHex(r.contractAddress) === target) return loc;
        }
      }
      if (rows.length < SCAN_CHUNK) return null;
      gte = Buffer.concat([rows[rows.length - 1][0], Buffer.from([0])]);
    }
  }
}
