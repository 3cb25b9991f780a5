#!/usr/bin/env node
// `npm run devnet`: a local 4-validator network plus one full node on 127.0.0.1. Generates data/devnet
// with the node's own testnet generator when it is missing, starts every node with the command
// nodes.json gives, prints their API URLs and a live line of heights and finality, and stops them all on
// Ctrl-C. Each node's log goes to data/devnet/<name>.log.
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.DEVNET_DIR ?? 'data/devnet';
const nodesFile = join(dir, 'nodes.json');
if (!existsSync(nodesFile)) {
  execFileSync(process.execPath, ['dist/ts/node/main.js', 'testnet', '--validators', '4', '--full-nodes', '1', '--out', dir], {
    stdio: 'inherit',
  });
}
const nodes = JSON.parse(readFileSync(nodesFile, 'utf8'));
const procs = nodes.map((n) => {
  const argv = n.start.split(' ').filter(Boolean);
  const log = createWriteStream(join(dir, `${n.name}.log`), { flags: 'a' });
  const p = spawn(process.execPath, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout.pipe(log);
  p.stderr.pipe(log);
  p.on('exit', (code, sig) => {
    if (!stopping) process.stderr.write(`\n${n.name} exited (${sig ?? code}); see ${join(dir, `${n.name}.log`)}\n`);
  });
  return p;
});
for (const n of nodes) process.stdout.write(`${n.name.padEnd(6)} ${n.role.padEnd(9)} ${n.api_url}  p2p ${n.p2p_port}  log ${join(dir, `${n.name}.log`)}\n`);

async function status(url) {
  try {
    const r = await fetch(`${url}/native_status`, { signal: AbortSignal.timeout(3000) });
    const s = await r.json();
    const c = s.consensus_state;
    const round = c?.round === null || c?.round === undefined ? '' : ` r${c.round}`;
    return `${s.sync_info.latest_block_height}${s.sync_info.catching_up ? ' syncing' : ''}${round} ${s.sync_info.peers}p`;
  } catch {
    return '-';
  }
}

let stopping = false;
const tty = process.stdout.isTTY;
const timer = setInterval(async () => {
  const line = (await Promise.all(nodes.map(async (n) => `${n.name}=${await status(n.api_url)}`))).join('  ');
  // Every committed block is final (BFT commits only blocks with a 3/4 certificate): height = finalized.
  const text = `finalized heights: ${line}`;
  if (!stopping) process.stdout.write(tty ? `\r\x1b[2K${text}` : `${text}\n`);
}, 1000);

function stop() {
  if (stopping) return;
  stopping = true;
  clearInterval(timer);
  process.stdout.write('\nstopping...\n');
  for (const p of procs) p.kill('SIGTERM');
  const force = setTimeout(() => {
    for (const p of procs) p.kill('SIGKILL');
    process.exit(1);
  }, 15_000);
  Promise.all(procs.map((p) => (p.exitCode !== null || p.signalCode !== null ? null : new Promise((r) => p.once('exit', r))))).then(() => {
    clearTimeout(force);
    process.exit(0);
  });
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
