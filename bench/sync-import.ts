/**
 * Block import as a syncing node does it, in one process (issue 25, section 2): a source chain makes `n`
 * finalized empty DPoS+BFT blocks (four validators, three precommits each), then a fresh chain imports their
 * bytes the way ts/sync/block-sync.ts does: decoded, signatures verified ahead in runs of 512 on the
 * verification threads, each block through `importBlock` (the one validity rule, execution, commit). Prints
 * blocks/s of the import alone. `node dist/bench/sync-import.js [blocks] [profile.cpuprofile]`;
 * SYNC_IMPORT=block imports block by block (one write each) as before runs were committed together.
 */
import { decodeBlock, encodeBlock } from '../ts/chain/block.js';
import { bftParams, nextFinalized } from '../test/helpers/bft-blocks.js';
import { openFixtureChain } from '../test/helpers/chain-fixture.js';
import { tempDir } from '../test/helpers/util.js';
import { profiled } from './cpu-profile.js';

// A testnet chain: a dev chain folds its between-block writes into each block, so it imports block by block.
const params = bftParams('testnet');
const RUN = 512;
/** Blocks per atomic commit, as ts/sync/block-sync.ts cuts a verified batch. */
const COMMIT_RUN = 128;

export interface SyncImportResult {
  blocksPerSec: number;
  ms: number;
  /** Process CPU (all threads) per block, ms. */
  cpuPerBlockMs: number;
  /** Chain.importTimings over the run, ms per block. */
  perBlock: { validate: number; write: number; listeners: number };
}

/** `perBlock`: one write per block (importBlock) instead of one per run of COMMIT_RUN blocks (importRun). */
export async function benchSyncImport(n: number, perBlock = false, profileFile?: string): Promise<SyncImportResult> {
  const d1 = tempDir();
  const d2 = tempDir();
  const src = await openFixtureChain(d1.dir, params);
  const dst = await openFixtureChain(d2.dir, params);
  try {
    const bytes: Uint8Array[] = [];
    for (let i = 0; i < n; i++) bytes.push(encodeBlock(await nextFinalized(src.chain, [])));
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await profiled(profileFile, async () => {
      // As block-sync.ts: the next run's signatures verify on the verification threads while this one imports.
      const verifying = (at: number) => {
        const blocks = bytes.slice(at, at + RUN).map((b) => decodeBlock(b));
        return { blocks, verified: dst.chain.verifyAhead(blocks) };
      };
      let next: ReturnType<typeof verifying> | null = verifying(0);
      for (let at = 0; next; at += RUN) {
        const { blocks, verified } = next;
        await verified;
        next = at + RUN < n ? verifying(at + RUN) : null;
        if (perBlock) for (const b of blocks) await dst.chain.importBlock(b);
        else for (let i = 0; i < blocks.length; i += COMMIT_RUN) await dst.chain.importRun(blocks.slice(i, i + COMMIT_RUN));
      }
    });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (dst.chain.head.hash !== src.chain.head.hash) throw new Error('the synced head differs from the source');
    const t = dst.chain.importTimings;
    return {
      blocksPerSec: n / (ms / 1000),
      ms,
      cpuPerBlockMs: (cpu.user + cpu.system) / 1000 / n,
      perBlock: { validate: t.validate_ms / n, write: t.write_ms / n, listeners: t.listeners_ms / n },
    };
  } finally {
    await src.db.close();
    await dst.db.close();
    d1.cleanup();
    d2.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 2000);
  const perBlock = process.env.SYNC_IMPORT === 'block';
  const r = await benchSyncImport(n, perBlock, process.argv[3]);
  const f = (x: number) => x.toFixed(3);
  process.stdout.write(
    `${perBlock ? 'importBlock' : 'importRun'}: ${n} empty BFT blocks imported in ${Math.round(r.ms)} ms: ${Math.round(r.blocksPerSec)} blocks/s; per block: CPU ${f(r.cpuPerBlockMs)} ms, validate ${f(r.perBlock.validate)}, write ${f(r.perBlock.write)}, listeners ${f(r.perBlock.listeners)} ms\n`,
  );
}
