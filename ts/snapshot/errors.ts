/**
 * Why a snapshot is refused. Each names what is wrong and whose fault it is: a chunk error is the fault of the
 * peer that sent that chunk; a manifest error is the fault of the peer(s) that offered the manifest.
 */

/** A manifest that is malformed or does not hash to its state root. */
export class SnapshotManifestError extends Error {
  readonly code = 'SNAPSHOT_MANIFEST';
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotManifestError';
  }
}

/** A manifest whose subtrees recompute another root than the one it names (or than the trusted block's). */
export class ForgedManifestRootError extends SnapshotManifestError {
  constructor(
    readonly claimed: string,
    readonly computed: string,
  ) {
    super(`manifest subtrees give state root ${computed}, not the ${claimed} it names`);
    this.name = 'ForgedManifestRootError';
  }
}

/** A chunk whose bytes are not the state under its subtrees. */
export class SnapshotChunkError extends Error {
  readonly code = 'SNAPSHOT_CHUNK';
  constructor(
    readonly index: number,
    readonly reason: string,
  ) {
    super(`snapshot chunk ${index} is invalid: ${reason}`);
    this.name = 'SnapshotChunkError';
  }
}
