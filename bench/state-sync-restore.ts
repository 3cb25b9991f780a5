/**
 * Where a state sync restore spends its CPU, in one process and without the network (issue 25, the state sync
 * target): the chunks of a snapshot directory restored into a fresh database through SnapshotRestorer, each
 * phase timed — decoding and verifying a chunk, its write (entries and progress record), its entries into the
 * trie, and finish() (the root check and the trie checkpoint). `node dist/bench/state-sync-restore.js
 * SNAPSHOT_DIR` (a `<data-dir>/snapshots/<height>` directory, e.g. one the state sync bench's validators took).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SnapshotRestorer, decodeManifest, verifyChunk } from '../ts/snapshot/index.js';
import { openRocksStore } from '../ts/storage/index.js';
import { tempDir } from '../test/helpers/util.js';

export interface RestoreProfile {
  chunks: number;
  entries: number;
  bytes: number;
  /** Milliseconds per phase, summed over the chunks. */
  verifyMs: number;
  addMs: number;
  finishMs: number;
  totalMs: number;
  cpuMs: number;
}

export async function profileRestore(snapshotDir: string): Promise<RestoreProfile> {
  const manifest = decodeManifest(readFileSync(join(snapshotDir, 'manifest.json')));
  const tmp = tempDir();
  const db = await openRocksStore(join(tmp.dir, 'db'));
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const restorer = await SnapshotRestorer.open(db, manifest, manifest.state_root);
    let verifyMs = 0;
    let addMs = 0;
    let bytes = 0;
    for (let i = 0; i < manifest.chunks.length; i++) {
      const chunk = readFileSync(join(snapshotDir, `chunk-${i}.bin`));
      bytes += chunk.length;
      const a = performance.now();
      // verifyChunk alone once (addChunk verifies again): its share of addChunk.
      verifyChunk(manifest, i, chunk);
      const b = performance.now();
      await restorer.addChunk(i, chunk);
      verifyMs += b - a;
      addMs += performance.now() - b;
    }
    const f = performance.now();
    await restorer.finish(join(tmp.dir, 'state-trie.ckpt'));
    const finishMs = performance.now() - f;
    const cpu = process.cpuUsage(cpu0);
    return {
      chunks: manifest.chunks.length,
      entries: manifest.entries,
      bytes,
      verifyMs,
      addMs,
      finishMs,
      totalMs: performance.now() - t0 - verifyMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
  } finally {
    await db.close();
    tmp.cleanup();
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const r = await profileRestore(process.argv[2]);
  const f = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  process.stdout.write(
    `${r.chunks} chunks, ${r.entries} entries, ${(r.bytes / 1e6).toFixed(1)} MB: verify ${f(r.verifyMs)}, addChunk (verify + write + trie) ${f(r.addMs)}, finish ${f(r.finishMs)}; restore ${f(r.totalMs)} wall; CPU ${f(r.cpuMs)} (all threads, the extra verify pass included)\n`,
  );
}
