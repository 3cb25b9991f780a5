/**
 * One fresh devnet per fault test (test/network/faults*.test.ts), with real node processes on 127.0.0.1:
 * the testnet generator's network of 4 validators and one full node, each started with its nodes.json
 * command, 200 ms blocks, BFT from height 5. The first `prebuilt` blocks are made by the validators' keys
 * in the test process (helpers/prebuilt-chain.ts), so a late full node has real blocks to sync without
 * minutes of waiting; everything after that is the live network. Each test has its own ports, data dirs
 * and processes: a failing case (a node left killed, a partition that did not heal) cannot carry over
 * into the next one, and any case runs alone (`--match`).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ExecutionContext, TestFn } from 'ava';
import { genesisIdentity, readGenesisFile } from '../../ts/chain/index.js';
import { type TestnetNode, generateTestnet } from '../../ts/node/index.js';
import {
  type Running,
  assertNoHonestPenalties,
  diagnose,
  exited,
  freeBasePort,
  heights,
  multiaddrOf,
  startNode,
  stopAll,
  stopNode,
} from './devnet.js';
import { httpJson } from './node.js';
import { type Prebuilt, prebuildChain } from './prebuilt-chain.js';
import { WaitAborted, tempDir, waitFor } from './util.js';

export const CHAIN_ID = 7120;
export const BFT_FROM = 5;
/** Setup of a network: prebuilding, four node processes starting and extending the prebuilt chain. */
const SETUP_MS = 180_000;

/** A wait's node crashed: waitFor rethrows this at once instead of polling to its deadline. */
class NodeExited extends WaitAborted {}

/** A validator's sign state on disk (priv_validator_state.json): the last thing it signed, and its lock. */
export interface SignState {
  height: number;
  round: number;
  /** 1 proposal, 2 prevote, 3 precommit. */
  step: number;
  block_hash: string;
  lock?: { round: number; block_hash: string };
}

export class FaultNetwork {
  readonly urls: string[];
  running: (Running | null)[] = [null, null, null, null, null];
  prebuilt!: Prebuilt;

  private constructor(
    readonly nodes: TestnetNode[],
    private readonly cleanup: () => void,
  ) {
    this.urls = nodes.map((n) => n.api_url);
  }

  /** A generated network (ports of its own, a temp dir) with nothing built or started yet. */
  static async generate(): Promise<FaultNetwork> {
    const tmp = tempDir();
    const nodes = generateTestnet({
      validators: 4,
      fullNodes: 1,
      out: join(tmp.dir, 'net'),
      basePort: await freeBasePort(5),
      chainId: CHAIN_ID,
      dposBftHeight: BFT_FROM,
      blockTimeMs: 200,
    });
    return new FaultNetwork(nodes, tmp.cleanup);
  }

  live(idx: number[]): string[] {
    return idx.map((i) => this.urls[i]);
  }

  async minHeight(idx: number[]): Promise<number> {
    return Math.min(...(await heights(this.live(idx))));
  }

  start(i: number, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Running {
    const r = startNode(this.nodes[i], extra, env);
    this.running[i] = r;
    return r;
  }

  /** Start node i with another static peer list (node indexes). */
  startWithPeers(i: number, peers: number[]): void {
    const argv = this.nodes[i].start.split(' ');
    argv[argv.indexOf('--peers') + 1] = peers.map((p) => multiaddrOf(this.nodes, p)).join(',');
    this.running[i] = startNode({ ...this.nodes[i], start: argv.join(' ') });
  }

  async kill(i: number, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const r = this.running[i];
    if (r) await stopNode(r, signal);
    this.running[i] = null;
  }

  /**
   * Wait until every listed node reaches a height. A listed node whose process ended fails the wait at once
   * (a crash is not a slow network); the failure's diagnostics come from the test's afterEach hook.
   */
  async reach(idx: number[], h: number, ms: number, what: string): Promise<void> {
    await waitFor(
      async () => {
        const down = idx.filter((i) => this.running[i] && exited(this.running[i] as Running));
        if (down.length > 0) throw new NodeExited(`node${down.join(', node')} exited while waiting for ${what}`);
        return (await heights(this.live(idx))).every((x) => x >= h);
      },
      ms,
      what,
    );
  }

  /**
   * Wait until every listed node decides the same height (its head + 1) and has prevoted there (step
   * prevote or precommit), at a height where none of the `down` validators (killed: their sign states on
   * disk are final) signed a precommit: one the listed nodes, short of a quorum, cannot end. Returns that
   * height. That it does not end is for the caller to prove afterwards (the certificate that finally ends
   * it holds a precommit signed after a restart).
   */
  async prevotedAt(idx: number[], down: number[], ms: number, what: string): Promise<number> {
    return waitFor(
      async () => {
        const s = await Promise.all(this.live(idx).map(async (u) => (await httpJson(`${u}/native_status`)).body));
        const h = s[0].consensus_state.height as number;
        const voted = s.every((x) => x.consensus_state.height === h && ['prevote', 'precommit'].includes(x.consensus_state.step));
        return voted && down.every((i) => this.noPrecommitAt(i, h)) ? h : null;
      },
      ms,
      what,
    );
  }

  /** The network identity peers must share (genesis block and parameters). */
  async networkId(): Promise<string> {
    const genesisBlock = (await httpJson(`${this.urls[0]}/chain/blocks/0`)).body.hash as string;
    return genesisIdentity(readGenesisFile(join(dirname(this.nodes[0].data_dir), 'genesis.json')), genesisBlock);
  }

  signState(i: number): SignState {
    return JSON.parse(readFileSync(join(this.nodes[i].data_dir, 'priv_validator_state.json'), 'utf8')) as SignState;
  }

  /** Validator i signed no precommit at height h (yet): its sign state is below h or before the precommit. */
  noPrecommitAt(i: number, h: number): boolean {
    const s = this.signState(i);
    return s.height < h || (s.height === h && s.step < 3);
  }

  /** The validators whose precommits are in height h's commit certificate (as node 0 serves it). */
  async signersOf(h: number): Promise<string[]> {
    return (await httpJson(`${this.urls[0]}/chain/blocks/${h}/signers`)).body.signers as string[];
  }

  async stop(): Promise<void> {
    await stopAll(this.running.filter((r): r is Running => r !== null));
    this.cleanup();
  }
}

export type FaultTest = (
  title: string,
  opts: { prebuilt: number; timeoutMs: number },
  body: (t: ExecutionContext, net: FaultNetwork) => Promise<void>,
) => void;

/**
 * The fault tests of one file: each builds its own network and runs serially (one network of five
 * processes at a time per file). A failed test prints every node's height, round, step and peers and the
 * tail of its log, so a CI failure can be diagnosed from the CI output alone. Every test's misbehaving
 * peers are outsiders: whatever the faults, no node may penalize another (their penalty lines, scanned
 * from every node's log across restarts; docs/p2p.md).
 */
export function faultTests(test: TestFn): FaultTest {
  let current: FaultNetwork | undefined;
  test.afterEach.always(async (t) => {
    const net = current;
    current = undefined;
    if (!net) return;
    if (!t.passed) t.log(await diagnose(net.running));
    await net.stop();
  });
  return (title, opts, body) =>
    test.serial(title, async (t) => {
      t.timeout(SETUP_MS);
      const net = await FaultNetwork.generate();
      current = net;
      net.prebuilt = await prebuildChain(net.nodes, opts.prebuilt);
      for (const i of [0, 1, 2, 3]) net.start(i);
      await net.reach([0, 1, 2, 3], opts.prebuilt + 3, SETUP_MS - 30_000, 'the live network extends the prebuilt chain');
      t.timeout(opts.timeoutMs);
      await body(t, net);
      assertNoHonestPenalties(t, net.nodes);
    });
}
