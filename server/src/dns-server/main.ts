// `npm run dns`: the platform's authoritative DNS server alone (server.ts). Same environment as
// `npm start`: DATABASE_URL, or else the embedded database of DATA_DIR that a running `npm start`
// serves. `npm start` runs one as its child (PLATFORM_DNS=on): its own process, so a busy API never
// delays an answer and its crash never takes the API down. SIGTERM/SIGINT close its port and exit 0;
// 1 on failure, 2 on a configuration error.
import { runningDatabaseUrl } from '../db/running-cluster.js';
import { connect } from '../db/client.js';
import { runChildProgram } from '../process/child-main.js';
import { startPlatformDns } from './server.js';

runChildProgram('dns', async (config, log) => {
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
  return {
    async stop() {
      await dns.stop();
      await sql.end({ timeout: 5 });
    },
  };
});
