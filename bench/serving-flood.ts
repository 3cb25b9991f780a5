/**
 * Issue 29, findings 4 and 5, against a real node process: (A) 32 peers each open 31 range requests
 * `{from:0,count:1024}` (992 in all) and never read the answers; (B) 96 block-by-hash requests announcing
 * a 3.9 MiB frame and sending all but its last byte, and 200 request streams that send one byte. The
 * node's RSS (/proc) and its /health latency are sampled throughout; B also counts the streams still open
 * after 20 s. The node serves a 200-block chain whose blocks 2-6 hold 1,000 transfers each (a range from 0
 * is ~1.5 MiB).
 *
 * `node dist/bench/serving-flood.js [--repo DIR]`: DIR is the repository whose build the node runs (default
 * this one), so the same attack can be measured against another build (`--repo /work/main`: before).
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { genesisIdentity, readGenesisFile } from '../ts/chain/genesis.js';
import { randomKeyPair } from '../ts/ledger/keys.js';
import { varint } from '../ts/network/serving.js';
import { generateTestnet } from '../ts/node/testnet.js';
import { REPO, type Running, freeBasePort, stopNode } from '../test/helpers/devnet.js';
import { httpJson } from '../test/helpers/node.js';
import { prebuildChain } from '../test/helpers/prebuilt-chain.js';
import { type RawPeer, closedWithin, lpFrame, rawHandshake, startRawPeer } from '../test/helpers/rogue-requests.js';
import { tempDir, waitFor } from '../test/helpers/util.js';

const CHAIN_ID = 7120;
const MiB = 1024 * 1024;

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};

const rssMiB = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

/** Sample RSS and /health latency every 200 ms until stopped. */
function sampler(pid: number, api: string) {
  const s = { peakRss: 0, maxHealthMs: 0, samples: 0, on: true };
  const done = (async () => {
    while (s.on) {
      s.peakRss = Math.max(s.peakRss, rssMiB(pid));
      const t0 = performance.now();
      await httpJson(`${api}/health`).catch(() => undefined);
      s.maxHealthMs = Math.max(s.maxHealthMs, performance.now() - t0);
      s.samples++;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stats: s,
    stop: async () => {
      s.on = false;
      await done;
      return s;
    },
  };
}

async function peers(n: number, o: { genesisHash: string; target: string }): Promise<RawPeer[]> {
  const out: RawPeer[] = [];
  for (let i = 0; i < n; i++) {
    // libp2p refuses more than a few inbound connections a second from one address: retry.
    const p = await waitFor(
      () => startRawPeer({ chainId: CHAIN_ID, genesisHash: o.genesisHash, target: o.target, status: 'silent' }),
      30_000,
      'an attacker connects',
    );
    await rawHandshake(p, CHAIN_ID, o.genesisHash).catch(() => undefined);
    out.push(p);
  }
  return out;
}

// An attacker's libp2p host redialling a node that banned it can hit a reset connection in libp2p's TCP
// dial without a listener for it: the attacker's problem, not the node's; the bench goes on.
process.on('uncaughtException', (err: NodeJS.ErrnoException) => {
  if (/ECONNRESET|ECONNREFUSED|EPIPE/.test(`${err.code} ${err.message}`)) return;
  throw err;
});

async function main(): Promise<void> {
  const repo = resolve(arg('--repo') ?? REPO);
  const tmp = tempDir();
  const nodes = generateTestnet({
    validators: 1,
    fullNodes: 0,
    out: join(tmp.dir, 'net'),
    basePort: await freeBasePort(1),
    chainId: CHAIN_ID,
    dposBftHeight: 1_000_000,
    blockTimeMs: 1000,
  });
  await prebuildChain(nodes, 200, { fund: Array.from({ length: 5000 }, () => randomKeyPair()) });
  // The node runs the build of `repo` (its start command from nodes.json, from that directory).
  const argv = nodes[0].start.split(' ').filter(Boolean);
  const proc = spawn(process.execPath, argv.slice(1), {
    cwd: repo,
    stdio: ['ignore', openSync(join(tmp.dir, 'node.log'), 'w'), openSync(join(tmp.dir, 'node.log'), 'a')],
    env: { ...process.env, NATIVE_LOG_LEVEL: 'info' },
  });
  const running: Running = { node: nodes[0], proc, logs: [] };
  const api = nodes[0].api_url;
  try {
    await waitFor(
      async () => (await httpJson(`${api}/native_status`)).body.sync_info.latest_block_height >= 200,
      60_000,
      'node up',
    );
    const peerId = (await httpJson(`${api}/net/peers`)).body.peer_id as string;
    const target = `/ip4/127.0.0.1/tcp/${nodes[0].p2p_port}/p2p/${peerId}`;
    const genesisBlock = (await httpJson(`${api}/chain/blocks/0`)).body.hash as string;
    const genesisHash = genesisIdentity(readGenesisFile(join(dirname(nodes[0].data_dir), 'genesis.json')), genesisBlock);
    const pid = running.proc.pid as number;
    const rss0 = rssMiB(pid);
    const lines: string[] = [`build: ${repo}`, `RSS at rest: ${rss0.toFixed(0)} MiB`];

    // A: 992 slow-read range requests over 32 connections, held for 30 s.
    const a = sampler(pid, api);
    const attackers = await peers(32, { genesisHash, target });
    let opened = 0;
    let closed30 = 0;
    const t0 = Date.now();
    await Promise.all(
      attackers.map(async (p) => {
        for (let i = 0; i < 31; i++) {
          const s = await p.open('blocks').catch(() => null);
          if (!s) continue;
          opened++;
          void closedWithin(s, t0).then(() => closed30++);
          try {
            s.pause();
            s.send(lpFrame(Buffer.from('{"from":0,"count":1024}')));
          } catch {
            // refused already
          }
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 30_000));
    const closedA = closed30;
    const sa = await a.stop();
    await Promise.all(attackers.map((p) => p.stop()));
    await new Promise((r) => setTimeout(r, 5_000));
    lines.push(
      `A (992 slow-read ranges, 32 peers): ${opened} streams opened, ${closedA} closed by the node within 30 s; ` +
        `peak RSS ${sa.peakRss.toFixed(0)} MiB, ${rssMiB(pid).toFixed(0)} MiB 5 s after; /health max ${sa.maxHealthMs.toFixed(0)} ms`,
    );

    // B: 96 partial 3.9 MiB block-by-hash requests and 200 one-byte streams.
    const b = sampler(pid, api);
    const big = await peers(4, { genesisHash, target });
    const small = await peers(8, { genesisHash, target });
    const tb = Date.now();
    const frame = Math.floor(3.9 * MiB);
    const prefix = varint(frame);
    const streams: Promise<number>[] = [];
    await Promise.all([
      ...big.map(async (p) => {
        for (let i = 0; i < 24; i++) {
          const s = await p.open('block-by-hash').catch(() => null);
          if (!s) continue;
          streams.push(closedWithin(s, tb));
          try {
            s.send(Buffer.concat([prefix, new Uint8Array(frame - 1)]));
          } catch {
            // refused already
          }
        }
      }),
      ...small.map(async (p) => {
        for (let i = 0; i < 25; i++) {
          const s = await p.open('consensus-sync').catch(() => null);
          if (!s) continue;
          streams.push(closedWithin(s, tb));
          try {
            s.send(Uint8Array.of(0x05));
          } catch {
            // refused already
          }
        }
      }),
    ]);
    await new Promise((r) => setTimeout(r, 20_000));
    const closed = await Promise.all(streams.map((p) => Promise.race([p, Promise.resolve(-1)])));
    const sb = await b.stop();
    lines.push(
      `B (96 partial 3.9 MiB + 200 one-byte requests): ${streams.length} streams opened, ` +
        `${closed.filter((x) => x < 0).length} still open after 20 s; peak RSS ${sb.peakRss.toFixed(0)} MiB; /health max ${sb.maxHealthMs.toFixed(0)} ms`,
    );
    await Promise.all([...big, ...small].map((p) => p.stop()));
    console.log(lines.join('\n'));
  } catch (err) {
    console.log(readFileSync(join(tmp.dir, 'node.log'), 'utf8').split('\n').slice(-30).join('\n'));
    throw err;
  } finally {
    await stopNode(running);
    if (!process.env.KEEP) tmp.cleanup();
  }
}

await main();
