// `npm run gateway`: the edge gateway on GATEWAY_PORT, on the PostgreSQL of DATABASE_URL (npm start
// starts one as its child and hands it the embedded database's URL; alone, it finds the embedded database a
// running `npm start` keeps in DATA_DIR). Any number may run on one database; started by `npm start`, it
// stops when its parent is gone, however it went. SIGTERM/SIGINT close every socket (1001) and exit 0; it exits 1 when it cannot start.
import { once } from 'node:events';
import { runningDatabaseUrl } from '../db/running-cluster.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { stopWithParent } from '../process/parent-pipe.js';
import { connect } from '../db/client.js';
import { systemClock } from '../clock.js';
import { createLogger } from '../http/logging.js';
import { secretBoxFor } from '../secrets/key-file.js';
import { createSubstrate } from '../substrate/index.js';
import { createGateway } from './server.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gateway: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel).child({ program: 'gateway' });
  const sql = connect(await runningDatabaseUrl(config), { max: 5, timeoutMs: config.dbTimeoutMs });
  const substrate = createSubstrate(config.substrate, { dataDir: config.dataDir, lxd: config.lxd });
  const gateway = createGateway({
    sql,
    config,
    log,
    clock: systemClock,
    box: secretBoxFor(config),
    substrate,
  });
  gateway.server.listen(config.gatewayPort, config.host);
  await once(gateway.server, 'listening');
  const addr = gateway.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.gatewayPort;
  await gateway.start(config.gatewayPublicUrl);
  const sftpPort = await gateway.sftp.listen(config.sftpPort, config.host);
  log.info({ port, sftp_port: sftpPort, public_url: config.gatewayPublicUrl }, 'gateway listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'gateway stopping');
    await gateway.close();
    await substrate.close();
    await sql.end({ timeout: 2 });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  stopWithParent((reason) => void stop(reason));
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
