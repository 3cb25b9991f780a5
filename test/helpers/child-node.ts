import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { type ChainValidation, validateChain } from '../../ts/chain/index.js';
import { parseConfig, NativeNode } from '../../ts/node/index.js';
import { TEST_NODE_ENV } from './node.js';
import { waitFor } from './util.js';

const MAIN = fileURLToPath(new URL('../../ts/node/main.js', import.meta.url));

export interface ChildNode {
  proc: ChildProcess;
  url: string;
  logs: string[];
  exited: Promise<number | null>;
}

/**
 * Start the real node binary as a child process (dev chain) and wait until its API listens. Rate limits are
 * raised (TEST_NODE_ENV) unless `env` or `args` set them.
 */
export async function spawnNode(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildNode> {
  const proc = spawn(process.execPath, [MAIN, '--dev', '--port', '0', ...args], {
    env: { ...process.env, ...TEST_NODE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let port = 0;
  let buf = '';
  proc.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      logs.push(line);
      try {
        const o = JSON.parse(line) as { msg?: string; port?: number };
        if (o.msg === 'API listening' && o.port) port = o.port;
      } catch {
        /* not JSON */
      }
    }
  });
  proc.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  await waitFor(() => port || proc.exitCode !== null, 90_000, 'node to listen');
  if (!port) throw new Error(`node exited early:\n${logs.join('\n')}`);
  return { proc, url: `http://127.0.0.1:${port}`, logs, exited };
}

/**
 * Open a stopped node's data dir in-process (dev chain, no production) and re-verify the whole chain
 * from genesis: headers, signatures, re-execution, state roots. The caller asserts on the report.
 */
export async function replayDataDir(dataDir: string): Promise<ChainValidation> {
  const node = await NativeNode.start(
    { ...parseConfig(['--dev', '--data-dir', dataDir], {}), apiPort: 0, grpcPort: null, blockTimeMs: 60_000 },
    pino({ level: 'silent' }),
  );
  try {
    await node.consensus.stop();
    return await validateChain(node.ctx.chain);
  } finally {
    await node.stop();
  }
}
