/**
 * Issue 26 section 5: a fleet for real. One validator and two full nodes from `testnet --validators 1
 * --full-nodes 2` (real processes on 127.0.0.1), HAProxy with deploy/haproxy.cfg in front of the full
 * nodes, and a steady JSON-RPC + REST read load through it while
 *   (a) a full node is SIGTERMed and restarted (a rolling restart): no request fails;
 *   (b) a third full node starts from genesis: it gets no traffic until its /ready answers 200;
 *   (c) a full node is killed with SIGKILL: at most the requests in flight at the kill fail, and HAProxy
 *       marks it down within its check interval (fall 2 x inter 1 s).
 * Skipped (with a log line) only where haproxy is not installed and CI is not set.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { TestnetNode } from '../../ts/node/index.js';
import { REPO, type Running, diagnose, freeBasePort, height, startNode, stopAll, stopNode } from '../helpers/devnet.js';
import {
  type Haproxy,
  ReadLoad,
  fleetConfig,
  haproxyInstalled,
  haproxyServers,
  startHaproxy,
  summarize,
} from '../helpers/fleet.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** HAProxy's check interval x fall (deploy/haproxy.cfg), plus slack for a loaded machine. */
const MARK_DOWN_BOUND_MS = 2 * 1000 + 1500;

/** A third full node like node2: fresh data dir (keys created at start), its own ports, same genesis and peers. */
function thirdNode(like: TestnetNode, dir: string, base: number): TestnetNode {
  const i = 3;
  const start = like.start
    .replace(/--data-dir \S+/, `--data-dir ${join(dir, 'node3')}`)
    .replace(/--name \S+/, '--name node3')
    .replace(/--port \d+/, `--port ${base + i}`)
    .replace(/--p2p-port \d+/, `--p2p-port ${base + 100 + i}`)
    .replace(/--grpc-port \d+/, `--grpc-port ${base + 200 + i}`);
  return {
    ...like,
    name: 'node3',
    api_url: `http://127.0.0.1:${base + i}`,
    p2p_port: base + 100 + i,
    data_dir: join(dir, 'node3'),
    start,
  };
}

const statusOf = async (h: Haproxy, name: string) => (await haproxyServers(h)).get(name);

test('fleet behind HAProxy: rolling restart loses nothing, a syncing node gets no traffic, kill -9 is taken out fast', async (t) => {
  if (!haproxyInstalled()) {
    if (process.env.CI) {
      t.fail('haproxy is not installed: scripts/setup.sh installs it, and the fleet test must run in CI');
      return;
    }
    t.log('SKIPPED: haproxy is not installed here (scripts/setup.sh installs it; in CI this test runs)');
    t.pass();
    return;
  }
  t.timeout(300_000);
  const tmp = tempDir('native-fleet-');
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(4);
  const gen = spawnSync(
    process.execPath,
    ['dist/ts/node/main.js', 'testnet', '--validators', '1', '--full-nodes', '2', '--out', tmp.dir, '--base-port', String(base)],
    { cwd: REPO, encoding: 'utf8' },
  );
  t.is(gen.status, 0, gen.stderr);
  const nodes = JSON.parse(readFileSync(join(tmp.dir, 'nodes.json'), 'utf8')) as TestnetNode[];
  t.deepEqual(
    nodes.map((n) => n.role),
    ['validator', 'full', 'full'],
  );
  const third = thirdNode(nodes[2], tmp.dir, base);
  const running: (Running | null)[] = nodes.map((n) => startNode(n));
  let haproxy: Haproxy | null = null;
  let load: ReadLoad | null = null;
  t.teardown(async () => {
    await load?.stop();
    await haproxy?.stop();
    await stopAll(running.filter((r): r is Running => r !== null));
  });
  try {
    const addr = (n: TestnetNode) => n.api_url.replace('http://', '');
    haproxy = await startHaproxy(
      tmp.dir,
      fleetConfig(base + 50, base + 51, { node1: addr(nodes[1]), node2: addr(nodes[2]), node3: addr(third) }),
      base + 50,
      base + 51,
    );
    const h = haproxy;
    // Blocks 1..5 exist everywhere before the load starts; node3 is down (not started) in HAProxy's eyes.
    await waitFor(
      async () => (await height(nodes[2].api_url)) >= 5 && (await height(nodes[1].api_url)) >= 5,
      120_000,
      'blocks 1..5 on the full nodes',
    );
    await waitFor(
      async () => {
        const s = await haproxyServers(h);
        return s.get('node1')?.status === 'UP' && s.get('node2')?.status === 'UP' && s.get('node3')?.status === 'DOWN';
      },
      60_000,
      'node1 and node2 UP, node3 DOWN',
    );
    load = new ReadLoad(h.url, 6, 5);
    const l = load;
    await waitFor(() => l.samples.filter((s) => s.ok).length >= 50, 30_000, 'the load to flow');

    // (a) Rolling restart of node1: SIGTERM (drain), wait for the exit, start it again, wait until it is back.
    const a0 = Date.now();
    const sigterm = Date.now();
    await stopNode(running[1]!, 'SIGTERM');
    const exitedAfterMs = Date.now() - sigterm;
    t.is(running[1]!.proc.exitCode, 0, 'a clean exit');
    t.not((await statusOf(h, 'node1'))?.status, 'UP', 'out of rotation before its listener closed');
    running[1] = startNode(nodes[1]);
    await waitFor(async () => (await statusOf(h, 'node1'))?.status === 'UP', 120_000, 'node1 back UP');
    const backStot = (await statusOf(h, 'node1'))!.stot;
    await waitFor(async () => (await statusOf(h, 'node1'))!.stot > backStot, 30_000, 'traffic to node1 again');
    const a1 = Date.now();
    const rolling = summarize(l.between(a0, a1));
    t.log(`(a) rolling restart: ${JSON.stringify({ ...rolling, drainAndStopMs: exitedAfterMs, windowMs: a1 - a0 })}`);
    t.is(
      rolling.failed,
      0,
      `failed during the rolling restart: ${JSON.stringify(
        l
          .between(a0, a1)
          .filter((s) => !s.ok)
          .slice(0, 3),
      )}`,
    );
    t.true(rolling.requests > 50);

    // (b) A third full node from genesis: no traffic until its own /ready says 200.
    running.push(startNode(third));
    const r3 = running[3]!;
    let readyAt = 0;
    let trafficAt = 0;
    let sawNotReady = false;
    await waitFor(
      async () => {
        const s = (await statusOf(h, 'node3'))!;
        let ready = false;
        try {
          const r = await fetch(`${third.api_url}/ready`, { signal: AbortSignal.timeout(3000) });
          await r.arrayBuffer();
          ready = r.status === 200;
          if (!ready) sawNotReady = true;
        } catch {
          sawNotReady = true; // not listening yet
        }
        if (ready && !readyAt) readyAt = Date.now();
        if (s.stot > 0 && !trafficAt) {
          trafficAt = Date.now();
          // HAProxy sent it requests: its /ready must have answered 200 before (HAProxy needs two in a row).
          t.true(readyAt > 0, `node3 got traffic (${s.stot} sessions, ${s.status}) before its /ready answered 200`);
        }
        return trafficAt > 0;
      },
      150_000,
      'node3 ready and in rotation',
    ).catch(async (err) => {
      throw new Error(`${(err as Error).message}\n${await diagnose([r3])}`);
    });
    t.true(sawNotReady, 'node3 was not ready at first (it synced from genesis)');
    t.log(`(b) node3: /ready 200 ${trafficAt - readyAt} ms before HAProxy sent it its first request (rise 2 x inter 1 s)`);

    // (c) kill -9 node2: only requests in flight at the kill may fail; HAProxy marks it down within its check interval.
    const before = (await statusOf(h, 'node2'))!;
    const inFlightAtKill = l.inFlight;
    const c0 = Date.now();
    running[2]!.proc.kill('SIGKILL');
    await waitFor(async () => (await statusOf(h, 'node2'))?.status === 'DOWN', 30_000, 'node2 DOWN');
    const downAfterMs = Date.now() - c0;
    const downStot = (await statusOf(h, 'node2'))!.stot;
    // Keep the load on for a while after: nothing fails any more, nothing more goes to node2.
    const c1 = Date.now();
    await waitFor(() => l.between(c1, Date.now()).length >= 60, 30_000, 'requests after node2 is down');
    const after = summarize(l.between(c1, Date.now()));
    const atKill = summarize(l.between(c0, c1));
    t.log(
      `(c) kill -9: ${JSON.stringify({ inFlightAtKill, failedAroundKill: atKill.failed, downAfterMs, stotBefore: before.stot, stotDown: downStot, after })}`,
    );
    t.true(atKill.failed <= inFlightAtKill, `${atKill.failed} failed, ${inFlightAtKill} were in flight at the kill`);
    t.true(downAfterMs <= MARK_DOWN_BOUND_MS, `marked DOWN after ${downAfterMs} ms`);
    t.is(after.failed, 0);
    t.is((await statusOf(h, 'node2'))!.stot, downStot, 'no request sent to node2 once it is down');
    await load.stop();
    const total = summarize(l.samples);
    t.log(`whole run: ${JSON.stringify(total)}`);
  } catch (err) {
    t.log(await diagnose(running));
    throw err;
  }
});
