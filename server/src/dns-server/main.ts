// `npm run dns`: the platform's authoritative DNS server alone (server.ts). Same environment as
// `npm start`: DATABASE_URL, or else the embedded database of DATA_DIR that a running `npm start`
// serves. `npm start` runs one as its child (PLATFORM_DNS=on): its own process, so a busy API never
// delays an answer and its crash never takes the API down. SIGTERM/SIGINT close its port and exit 0;
// 1 on failure, 2 on a configuration error.
import { runningDatabaseUrl } from '../db/running-cluster.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connect } from '../db/client.js';
import { createLogger } from '../http/logging.js';
import { stopWithParent } from '../process/parent-pipe.js';
import { startPlatformDns } from './server.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`dns: ${err.message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  // Two connections: one held by LISTEN, one for snapshots and polls.
  const sql = connect(await runningDatabaseUrl(config), { max: 2 });
  const dns = await startPlatformDns({
    sql,
    host: config.host,
    port: config.dnsPort,
    platformDomain: config.platformDomain,
    ingressAddress: config.host,
    log,
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'platform DNS stopping');
    await dns.stop();
    await sql.end({ timeout: 5 });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  stopWithParent((reason) => void stop(reason));
}

main().catch((err: unknown) => {
  process.stderr.write(`dns: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
