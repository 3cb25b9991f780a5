#!/usr/bin/env node
import { pino } from 'pino';
import { parseConfig } from './config.js';
import { NativeNode } from './node.js';

async function main(): Promise<void> {
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
