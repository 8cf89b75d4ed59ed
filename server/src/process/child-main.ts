// The life of a program `npm start` runs as its child (the edge, the gateway, the platform DNS), or that
// runs alone (`npm run edge`...): configuration from the environment (exit 2 when it is wrong), start,
// then one orderly stop on SIGTERM, SIGINT or its parent's end (exit 0); exit 1 when it cannot start.
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createLogger } from '../http/logging.js';
import { stopWithParent } from './parent-pipe.js';

export interface Started {
  /** Closes what the program holds (its listeners, then its database connections). */
  stop(): Promise<void>;
}

export function runChildProgram(
  name: string,
  start: (config: Config, log: Logger) => Promise<Started>,
): void {
  const main = async () => {
    let config: Config;
    try {
      config = loadConfig();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(2);
    }
    const log = createLogger(config.logLevel).child({ program: name });
    const started = await start(config, log);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, `${name} stopping`);
      await started.stop();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
    stopWithParent((reason) => void stop(reason));
  };
  main().catch((err: unknown) => {
    process.stderr.write(`${name}: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
