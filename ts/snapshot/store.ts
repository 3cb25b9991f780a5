/**
 * The snapshots a node holds: `<data-dir>/snapshots/<height>/` (manifest.json and chunk files), built in
 * `<height>.tmp/` and renamed when complete, so a directory named by a height alone is a whole snapshot.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type SnapshotManifest, decodeManifest } from './format.js';
import { MANIFEST_FILE, chunkFile } from './take.js';

/** The snapshots directory in a node's data directory. */
export const SNAPSHOTS_DIR = 'snapshots';

const HEIGHT_RE = /^[1-9][0-9]*$/;

export class SnapshotDirectory {
  constructor(readonly root: string) {
    mkdirSync(root, { recursive: true });
  }

  /** Heights of the complete snapshots, newest first. */
  heights(): number[] {
    return readdirSync(this.root)
      .filter((n) => HEIGHT_RE.test(n) && existsSync(join(this.root, n, MANIFEST_FILE)))
      .map(Number)
      .sort((a, b) => b - a);
  }

  has(height: number): boolean {
    return existsSync(join(this.root, String(height), MANIFEST_FILE));
  }

  /** The manifest's bytes as stored (what a peer is sent), or null. */
  async manifestBytes(height: number): Promise<Buffer | null> {
    return readFile(join(this.root, String(height), MANIFEST_FILE)).catch(() => null);
  }

  async manifest(height: number): Promise<SnapshotManifest | null> {
    const b = await this.manifestBytes(height);
    return b === null ? null : decodeManifest(b);
  }

  /** A chunk's bytes, or null when this node does not hold it. */
  async chunk(height: number, index: number): Promise<Buffer | null> {
    if (!Number.isSafeInteger(index) || index < 0) return null;
    return readFile(join(this.root, String(height), chunkFile(index))).catch(() => null);
  }

  /** Remove all but the newest `keep` snapshots; returns the heights removed. */
  prune(keep: number): number[] {
    const old = this.heights().slice(Math.max(0, keep));
    for (const h of old) rmSync(join(this.root, String(h)), { recursive: true, force: true });
    return old;
  }

  /** Remove the snapshots of heights above `height` (a rollback made them another chain's); returns them. */
  removeAbove(height: number): number[] {
    const gone = this.heights().filter((h) => h > height);
    for (const h of gone) rmSync(join(this.root, String(h)), { recursive: true, force: true });
    return gone;
  }

  /** Remove snapshots left half-built by a crash (`<height>.tmp`). */
  clearUnfinished(): number {
    let n = 0;
    for (const name of readdirSync(this.root)) {
      if (!name.endsWith('.tmp')) continue;
      rmSync(join(this.root, name), { recursive: true, force: true });
      n++;
    }
    return n;
  }
}
