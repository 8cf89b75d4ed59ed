// `npm run gateway`: the edge gateway on GATEWAY_PORT, on the PostgreSQL of DATABASE_URL (npm start
// starts one as its child and hands it the embedded database's URL; alone, it finds the embedded database a
// running `npm start` keeps in DATA_DIR). Any number may run on one database; started by `npm start`, it
// stops when its parent is gone, however it went. SIGTERM/SIGINT close every socket (1001) and exit 0; it
// exits 1 when it cannot start, 2 on a configuration error.
import { once } from 'node:events';
import { runningDatabaseUrl } from '../db/running-cluster.js';
import { connect } from '../db/client.js';
import { systemClock } from '../clock.js';
import { runChildProgram } from '../process/child-main.js';
import { secretBoxFor } from '../secrets/key-file.js';
import { createSubstrate } from '../substrate/index.js';
import { createGateway } from './server.js';

runChildProgram('gateway', async (config, log) => {
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
  return {
    async stop() {
      await gateway.close();
      await substrate.close();
      await sql.end({ timeout: 2 });
    },
  };
});
