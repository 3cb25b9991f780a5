#!/usr/bin/env node
import { ListenError } from '../http/index.js';
import { NODE_VERSION } from '../services/index.js';
import { type Command, parseCommand } from './config.js';
import { devBanner, showsDevBanner } from './dev-banner.js';
import { nodeHelp } from './flags.js';
import { createLogger } from './log.js';
import { DataDirInUseError, NativeNode } from './node.js';
import { TESTNET_USAGE, generateTestnet, parseTestnetArgs } from './testnet.js';

/** Exit codes: 1 the node could not start or failed, 2 bad configuration. */
const EXIT_FAILED = 1;
const EXIT_CONFIG = 2;

/** Start-up failures a user can fix: one plain line, no stack trace. */
const isUserFixable = (err: unknown): err is Error => err instanceof ListenError || err instanceof DataDirInUseError;

async function main(): Promise<void> {
  if (process.argv[2] === 'testnet') {
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
  let cmd: Command;
  try {
    cmd = parseCommand(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`config error: ${(err as Error).message}\n`);
    process.exit(EXIT_CONFIG);
  }
  if (cmd.kind === 'help') {
    process.stdout.write(nodeHelp(NODE_VERSION));
    return;
  }
  if (cmd.kind === 'version') {
    process.stdout.write(`native-node ${NODE_VERSION} (node ${process.version}, ${process.platform}-${process.arch})\n`);
    return;
  }
  const { config } = cmd;
  const log = createLogger({ level: config.logLevel, nodeName: config.nodeName, format: config.logFormat });
  let node: NativeNode;
  try {
    node = await NativeNode.start(config, log);
  } catch (err) {
    if (!isUserFixable(err)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(EXIT_FAILED);
  }
  if (showsDevBanner(config.network, process.stdout)) {
    process.stdout.write(devBanner(node.ctx, `http://${config.apiHost}:${node.http.port}`, config.ws));
  }
  const shutdown = (signal: string): void => {
    log.info({ signal }, 'shutting down');
    node.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(EXIT_FAILED);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? err}\n`);
  process.exit(EXIT_FAILED);
});
