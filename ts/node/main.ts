#!/usr/bin/env node
/**
 * The node's command. Only the flag table and the version load before the flags are read: `--help` and
 * `--version` answer without loading the node (~2 s of modules before), and a start loads what it runs.
 */
import { NODE_VERSION } from '../util/light.js';
import type { Command } from './config.js';
import type { NativeNode } from './node.js';
import { infoCommand, nodeHelp } from './flags.js';

/** Exit codes: 1 the node could not start or failed, 2 bad configuration. */
const EXIT_FAILED = 1;
const EXIT_CONFIG = 2;

/** Start-up failures a user can fix: one plain line, no stack trace. */
async function isUserFixable(err: unknown): Promise<boolean> {
  const [{ ListenError }, { DataDirInUseError }, { ApiKeysFileError }] = await Promise.all([
    import('../http/index.js'),
    import('./node-store.js'),
    import('../api/index.js'),
  ]);
  return err instanceof ListenError || err instanceof DataDirInUseError || err instanceof ApiKeysFileError;
}

async function main(): Promise<void> {
  if (process.argv[2] === 'testnet') {
    const { TESTNET_USAGE, generateTestnet, parseTestnetArgs } = await import('./testnet.js');
    if (process.argv.includes('--help') || process.argv.includes('-h')) {
      process.stdout.write(TESTNET_USAGE);
      return;
    }
    try {
      const o = parseTestnetArgs(process.argv.slice(3));
      const nodes = generateTestnet(o);
      process.stdout.write(`wrote ${nodes.length} nodes to ${o.out} (nodes.json, genesis.json)\n`);
      for (const n of nodes) process.stdout.write(`${n.name} ${n.role} ${n.api_url}\n`);
      return;
    } catch (err) {
      const message = (err as Error).message.replace(/^testnet: /, '');
      process.stderr.write(`testnet: ${message}\n${TESTNET_USAGE}`);
      process.exit(EXIT_CONFIG);
    }
  }
  const info = infoCommand(process.argv.slice(2));
  if (info === 'help') {
    process.stdout.write(nodeHelp(NODE_VERSION));
    return;
  }
  if (info === 'version') {
    process.stdout.write(`native-node ${NODE_VERSION} (node ${process.version}, ${process.platform}-${process.arch})\n`);
    return;
  }
  const { parseCommand } = await import('./config.js');
  let cmd: Command;
  try {
    cmd = parseCommand(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`config error: ${(err as Error).message}\n`);
    process.exit(EXIT_CONFIG);
  }
  if (cmd.kind !== 'run') return; // help and version answered above
  const { config } = cmd;
  // RocksDB opens on libuv's threads while the rest of the node loads (node-store.ts).
  const { openNodeStore } = await import('./node-store.js');
  const store = openNodeStore(config.dataDir);
  const [{ createLogger }, { NativeNode: Node }] = await Promise.all([import('./log.js'), import('./node.js')]);
  const log = createLogger({ level: config.logLevel, nodeName: config.nodeName, format: config.logFormat });
  let node: NativeNode;
  try {
    node = await Node.start(config, log, { store });
  } catch (err) {
    if (!(await isUserFixable(err))) throw err;
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(EXIT_FAILED);
  }
  if (config.network === 'dev') {
    const { devBanner, showsDevBanner } = await import('./dev-banner.js');
    if (showsDevBanner(config.network, process.stdout)) {
      process.stdout.write(devBanner(node.ctx, `http://${config.apiHost}:${node.http.port}`, config.ws));
    }
  }
  const { installSignalHandlers } = await import('./shutdown.js');
  installSignalHandlers(node, {
    drainSecs: config.drainSecs,
    shutdownGraceSecs: config.shutdownGraceSecs,
    log,
    reload: () => node.reloadApiKeys(),
    onStopped: (err) => {
      if (err === undefined) process.exit(0);
      log.error({ err }, 'shutdown failed');
      process.exit(EXIT_FAILED);
    },
  });
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? err}\n`);
  process.exit(EXIT_FAILED);
});
