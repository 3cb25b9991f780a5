/** The transaction pool, its admission, and the journal that keeps accepted transactions across a restart. */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Chain } from '../../chain/index.js';
import { DEFAULT_MEMPOOL_LIMITS, Mempool, TxAdmission, TxJournal } from '../../mempool/index.js';
import type { NodeConfig } from '../config.js';
import type { Built } from './stops.js';

/**
 * Open the transaction journal, replay what it holds through admission (arrival order; what is now invalid or
 * already in a block is refused and forgotten), then journal every later API admission and forget each
 * transaction once its block commits.
 */
async function openJournal(
  dir: string,
  chain: Chain,
  mempool: Mempool,
  admission: TxAdmission,
): Promise<{ journal: TxJournal; replayed: number }> {
  const { journal, replay } = await TxJournal.open(dir);
  let replayed = 0;
  for (const tx of replay) {
    try {
      if (tx.public_key === '') await admission.submitRaw(Buffer.from(tx.signature, 'hex'));
      else await admission.submit(tx);
      replayed++;
    } catch {
      /* included meanwhile, or no longer valid: dropped, as a restarted pool would drop it */
    }
  }
  const pending = (id: string) => mempool.has(id);
  journal.prune([], pending);
  admission.journal = journal;
  chain.on('block', (b) =>
    journal.prune(
      b.transactions.map((tx) => tx.txid),
      pending,
    ),
  );
  return { journal, replayed };
}

/** The pool and its admission; with --tx-journal (the default) the journal, replayed into the pool. */
export async function buildMempool(
  config: NodeConfig,
  chain: Chain,
  log: Logger,
): Promise<Built<{ mempool: Mempool; admission: TxAdmission; journal: TxJournal | null }>> {
  const mempool = new Mempool({ ...DEFAULT_MEMPOOL_LIMITS, maxPerSender: config.maxPerSender, maxTotal: config.maxMempool });
  const admission = new TxAdmission(chain, mempool);
  if (!config.txJournal) return { mempool, admission, journal: null };
  const { journal, replayed } = await openJournal(join(config.dataDir, 'tx-journal'), chain, mempool, admission);
  if (replayed > 0) log.info({ replayed, pending: mempool.size }, 'transaction journal replayed');
  return {
    mempool,
    admission,
    journal,
    stop: async () => {
      await journal.close();
      log.info(journal.stats, 'transaction journal closed');
    },
  };
}
