#!/usr/bin/env node
import { pino } from 'pino';
import { parseConfig } from './config.js';
import { NativeNode } from './node.js';
import { generateTestnet, parseTestnetArgs } from './testnet.js';

async function main(): Promise<void> {
  if (process.argv[2] === 'testnet') {
    try {
      const o = parseTestnetArgs(process.argv.slice(3));
      const nodes = generateTestnet(o);
      process.stdout.write(`wrote ${nodes.length} nodes to ${o.out} (nodes.json, genesis.json)\n`);
      for (const n of nodes) process.stdout.write(`${n.name} ${n.role} ${n.api_url}\n`);
      return;
    } catch (err) {
      process.stderr.write(`testnet: ${(err as Error).message}\n`);
      process.exit(2);
    }
  }
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`config error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const log = pino({ level: config.logLevel, base: { node: config.nodeName } });
  const node = await NativeNode.start(config, log);
  const shutdown = (signal: string): void => {
    log.info({ signal }, 'shutting down');
    node.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
