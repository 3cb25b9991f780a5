#!/usr/bin/env node
// `npm run devnet`: a local 4-validator network plus one full node on 127.0.0.1. Generates data/devnet
// with the node's own testnet generator when it is missing, starts every node with the command
// nodes.json gives, prints their API URLs and a live line of heights, and stops them all on Ctrl-C.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
  const argv = n.start.split(' ');
  const p = spawn(process.execPath, argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
  p.on('exit', (code, sig) => process.stderr.write(`${n.name} exited (${sig ?? code})\n`));
  return p;
});
for (const n of nodes) process.stdout.write(`${n.name.padEnd(6)} ${n.role.padEnd(9)} ${n.api_url}\n`);

async function status(url) {
  try {
    const r = await fetch(`${url}/native_status`, { signal: AbortSignal.timeout(1000) });
    const s = await r.json();
    return `${s.sync_info.latest_block_height}${s.sync_info.catching_up ? '*' : ''}`;
  } catch {
    return '-';
  }
}
const timer = setInterval(async () => {
  const heights = await Promise.all(nodes.map((n) => status(n.api_url)));
  process.stdout.write(`heights: ${nodes.map((n, i) => `${n.name}=${heights[i]}`).join('  ')}\n`);
}, 2000);

function stop() {
  clearInterval(timer);
  for (const p of procs) p.kill('SIGTERM');
  setTimeout(() => process.exit(0), 3000).unref();
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
