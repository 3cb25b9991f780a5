/**
 * The network of the state sync fault tests (test/network/state-sync-faults.test.ts): four validator
 * processes taking a snapshot every few blocks, cut into a dozen chunks or more (NATIVE_TEST_SNAPSHOT_CHUNK_BYTES),
 * full nodes that join with --state-sync from the peers the test lists, and misbehaving snapshot peers as
 * processes of their own (./snapshot-fault-peer.ts). One network serves every case: each case has its own
 * joining node (data dir and ports of the generator) and its own fault peers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { genesisIdentity, readGenesisFile } from '../../ts/chain/index.js';
import { peerIdOfNodeKey } from '../../ts/network/index.js';
import { type TestnetNode, generateTestnet } from '../../ts/node/index.js';
import { SnapshotDirectory } from '../../ts/snapshot/index.js';
import { toHex } from '../../ts/util/index.js';
import { type Running, diagnose, exited, freeBasePort, height, multiaddrOf, startNode, stopAll, stopNode } from './devnet.js';
import { httpJson } from './node.js';
import type { FaultPeerConfig, SnapshotFault } from './snapshot-fault-peer.js';
import { WaitAborted, tempDir, waitFor } from './util.js';

export const SNAPSHOT_INTERVAL = 6;
export const SNAPSHOT_KEEP = 3;
/** Chunks of ~200 bytes: the devnet's ~40 state entries make 15-30 chunks. */
const CHUNK_BYTES = 200;
const VALIDATORS = 4;
/** Full nodes generated (one joining node per use; indexes VALIDATORS..VALIDATORS+JOINERS-1). */
const JOINERS = 8;
/** Fault peers take the P2P ports of node indexes from here on (inside the base's range). */
const FAULT_SLOT = 20;
const FAULT_PEERS = 20;
const PROGRAM = fileURLToPath(new URL('./snapshot-fault-peer.js', import.meta.url));

export type JoinStatus = {
  phase: string;
  snapshot_height: number | null;
  chunks_done: number;
  chunks_total: number;
};

/** Where a fault peer listens and who it is. */
export interface FaultPeerSlot {
  port: number;
  nodeKey: Uint8Array;
  peerId: string;
  addr: string;
}

/** A fault peer process and what it logged (one JSON object per event). */
export class FaultPeer {
  readonly events: Record<string, unknown>[] = [];

  constructor(
    readonly proc: ChildProcess,
    readonly peerId: string,
    readonly addr: string,
  ) {
    let partial = '';
    proc.stdout?.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        try {
          this.events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          this.events.push({ event: 'output', line });
        }
      }
    });
    proc.stderr?.on('data', (d: Buffer) => this.events.push({ event: 'stderr', line: d.toString() }));
  }

  count(event: string): number {
    return this.events.filter((e) => e.event === event).length;
  }

  /** Kill it (SIGKILL: it disappears, mid-request if it holds any) and wait for the process to end. */
  async kill(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const done = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.kill('SIGKILL');
    await done;
  }

  describe(): string {
    return `fault peer ${this.peerId}: ${this.events
      .slice(-15)
      .map((e) => JSON.stringify(e))
      .join('\n  ')}`;
  }
}

export class StateSyncNet {
  readonly validators: TestnetNode[];
  readonly running: Running[] = [];
  private readonly faultPeers: FaultPeer[] = [];
  /** Genesis block hash (read from validator 0 once). */
  private genesisHash = '';
  private nextJoiner = 0;
  private nextFault = 0;

  private constructor(
    readonly nodes: TestnetNode[],
    readonly dir: string,
    readonly base: number,
    readonly chainId: number,
    private readonly cleanup: () => void,
  ) {
    this.validators = nodes.filter((n) => n.role === 'validator');
  }

  /** Generate the network, start the validators and wait until two of them offer a snapshot. */
  static async start(): Promise<StateSyncNet> {
    const tmp = tempDir('state-sync-faults-');
    const base = await freeBasePort(FAULT_SLOT + FAULT_PEERS);
    const chainId = 7140;
    const nodes = generateTestnet({
      validators: VALIDATORS,
      fullNodes: JOINERS,
      out: join(tmp.dir, 'net'),
      basePort: base,
      chainId,
      dposBftHeight: 3,
      blockTimeMs: 400,
    });
    const net = new StateSyncNet(nodes, tmp.dir, base, chainId, tmp.cleanup);
    const flags = ['--snapshot-interval', String(SNAPSHOT_INTERVAL), '--snapshot-keep', String(SNAPSHOT_KEEP)];
    net.running.push(
      ...net.validators.map((v) => startNode(v, flags, { NATIVE_TEST_SNAPSHOT_CHUNK_BYTES: String(CHUNK_BYTES) })),
    );
    await waitFor(
      () => net.snapshotHeights(0).length > 0 && net.snapshotHeights(1).length > 0,
      180_000,
      'validator snapshots',
    ).catch(async (err) => {
      throw new Error(`${(err as Error).message}\n${await diagnose(net.running)}`);
    });
    return net;
  }

  async stop(): Promise<void> {
    await Promise.all(this.faultPeers.map((f) => f.kill()));
    await stopAll(this.running);
    this.cleanup();
  }

  /** Validator i's multiaddr. */
  addr(i: number): string {
    return multiaddrOf(this.nodes, i);
  }

  /** The heights of the complete snapshots in node i's data dir, newest first. */
  snapshotHeights(i: number): number[] {
    return new SnapshotDirectory(this.snapshotsDir(i)).heights();
  }

  snapshotsDir(i: number): string {
    return join(this.nodes[i].data_dir, 'snapshots');
  }

  /** A copy of validator 0's newest snapshot that no pruning removes: { dir, height, block hash }. */
  async freezeNewestSnapshot(): Promise<{ dir: string; height: number; blockHash: string }> {
    const dir = join(this.dir, `frozen-${this.nextFault}`);
    mkdirSync(dir, { recursive: true });
    return waitFor(
      async () => {
        const h = this.snapshotHeights(0)[0];
        if (h === undefined) return null;
        cpSync(join(this.snapshotsDir(0), String(h)), join(dir, String(h)), { recursive: true });
        const m = await new SnapshotDirectory(dir).manifest(h);
        return m && { dir, height: h, blockHash: m.block_hash };
      },
      30_000,
      'a copy of a snapshot',
    );
  }

  /** The network identity peers check at the handshake. */
  private networkId(): string {
    const genesis = readGenesisFile(join(dirname(this.nodes[0].data_dir), 'genesis.json'));
    return genesisIdentity(genesis, this.genesisHash);
  }

  /** A fault peer's identity and port, before it runs (so a joining node can list it in --peers first). */
  reserve(): FaultPeerSlot {
    if (this.nextFault >= FAULT_PEERS) throw new Error('out of fault peer ports');
    const port = this.base + 100 + FAULT_SLOT + this.nextFault++;
    const nodeKey = randomBytes(32);
    const peerId = peerIdOfNodeKey(nodeKey);
    return { port, nodeKey, peerId, addr: `/ip4/127.0.0.1/tcp/${port}/p2p/${peerId}` };
  }

  /**
   * Start a fault peer (on `o.slot`, else a new one) serving `o.snapshots` (validator 0's live snapshot directory
   * by default), relaying blocks from validator 0, and wait until it listens.
   */
  async faultPeer(
    t: ExecutionContext,
    fault: SnapshotFault,
    o: { snapshots?: string; honestChunks?: number; slot?: FaultPeerSlot } = {},
  ): Promise<FaultPeer> {
    if (this.genesisHash === '')
      this.genesisHash = (await httpJson(`${this.validators[0].api_url}/chain/blocks/0`)).body.hash as string;
    const slot = o.slot ?? this.reserve();
    const config: FaultPeerConfig = {
      nodeKey: toHex(slot.nodeKey),
      port: slot.port,
      chainId: this.chainId,
      genesisHash: this.networkId(),
      upstream: this.addr(0),
      snapshots: o.snapshots ?? this.snapshotsDir(0),
      fault,
      honestChunks: o.honestChunks,
    };
    const proc = spawn(process.execPath, [PROGRAM, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const peer = new FaultPeer(proc, slot.peerId, slot.addr);
    this.faultPeers.push(peer);
    t.teardown(() => peer.kill());
    await waitFor(
      () => {
        if (proc.exitCode !== null) throw new WaitAborted(`fault peer exited: ${peer.describe()}`);
        return peer.count('listening') > 0;
      },
      60_000,
      `fault peer (${fault}) listening`,
    );
    return peer;
  }

  /**
   * Start the next generated full node with --state-sync (plus `extra`), its static peers exactly `peers`.
   * `restart` starts the given node again with its data dir as it is.
   */
  joiner(t: ExecutionContext, peers: string[], extra: string[] = [], restart?: TestnetNode): Running {
    let node = restart;
    if (!node) {
      if (this.nextJoiner >= JOINERS) throw new Error('out of generated full nodes');
      node = this.nodes[VALIDATORS + this.nextJoiner++];
    }
    const start = node.start.replace(/--peers \S+/, `--peers ${peers.join(',')}`);
    const r = startNode({ ...node, start }, ['--state-sync', ...extra]);
    this.running.push(r);
    t.teardown(() => stopNode(r));
    return r;
  }

  async status(node: TestnetNode): Promise<{ sync_info: Record<string, unknown> & { state_sync?: JoinStatus } } | null> {
    return (await httpJson(`${node.api_url}/native_status`).catch(() => null))?.body ?? null;
  }

  /** The joining node's state sync status, once it answers (null before). */
  async joinStatus(node: TestnetNode): Promise<JoinStatus | null> {
    return (await this.status(node))?.sync_info.state_sync ?? null;
  }

  /** Wait until a node joined (an earliest height above 0) and reached validator 0's head. */
  async joined(t: ExecutionContext, r: Running, ms = 180_000): Promise<{ earliest: number; latest: number }> {
    const v0 = this.validators[0].api_url;
    return waitFor(
      async () => {
        if (exited(r)) throw new WaitAborted(`${r.node.name} exited`);
        const s = (await this.status(r.node))?.sync_info;
        const earliest = s?.earliest_block_height;
        const latest = s?.latest_block_height;
        return typeof latest === 'number' && typeof earliest === 'number' && earliest > 0 && latest >= (await height(v0)) - 2
          ? { earliest, latest }
          : null;
      },
      ms,
      `${r.node.name} joined and at the head`,
    ).catch(async (err) => {
      t.log(await diagnose([...this.running.filter((x) => !exited(x)), r]));
      for (const f of this.faultPeers) t.log(f.describe());
      throw err;
    });
  }

  /** The joined node answers an account's balance at `latest` as validator 0 does (balances move every block). */
  async assertSameBalance(t: ExecutionContext, node: TestnetNode, latest: number): Promise<void> {
    const account = this.validators[1].validator_address as string;
    const at = `0x${latest.toString(16)}`;
    const mine = await rpc(node.api_url, 'eth_getBalance', [account, at]);
    const theirs = await rpc(this.validators[0].api_url, 'eth_getBalance', [account, at]);
    t.truthy(mine.result, JSON.stringify(mine));
    t.is(mine.result, theirs.result, `balance at ${latest}`);
  }

  /** While a node restores: state reads are refused as "node is syncing", health and status answer. */
  async assertRefusesState(t: ExecutionContext, node: TestnetNode): Promise<void> {
    const account = this.validators[1].validator_address as string;
    const refused = await rpc(node.api_url, 'eth_getBalance', [account, 'latest']);
    t.deepEqual(refused.error, { code: -32000, message: 'node is syncing' });
    const rest = await httpJson(`${node.api_url}/accounts/${account}`);
    t.is(rest.status, 503);
    t.is(rest.body.error, 'node is syncing');
    t.is((await httpJson(`${node.api_url}/health`)).status, 200);
  }
}

export async function rpc(
  url: string,
  method: string,
  params: unknown[],
): Promise<{ result?: string; error?: { code: number; message: string } }> {
  return (await httpJson(`${url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method, params } })).body;
}

/** The JSON log lines of a node with this message (whole lines, parsed). */
export function logLines(r: Running, msg: string): Record<string, unknown>[] {
  return r.logs
    .join('')
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
