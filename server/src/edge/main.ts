// `npm run edge`: the local edge alone (edge.ts). Same environment as `npm start`: DATABASE_URL, or else
// the embedded database of DATA_DIR that a running `npm start` serves. `npm start` runs one as its child
// (EDGE=on, child.ts). SIGTERM/SIGINT close its ports and exit 0; 1 on failure, 2 on a configuration error.
import { runningDatabaseUrl } from '../db/running-cluster.js';
import { connect } from '../db/client.js';
import { runChildProgram } from '../process/child-main.js';
import { createSubstrate } from '../substrate/index.js';
import { secretBoxFor } from '../secrets/key-file.js';
import { startEdge } from './edge.js';

runChildProgram('edge', async (config, log) => {
  // Two connections: one held by LISTEN, one for reads and reports.
  const sql = connect(await runningDatabaseUrl(config), { max: 2 });
  const edge = await startEdge({
    sql,
    // Units of this machine's processes listen where the edge forwards already.
    substrate:
      config.substrate === 'lxd'
        ? createSubstrate('lxd', { dataDir: config.dataDir, lxd: config.lxd })
        : undefined,
    host: config.host,
    id: config.edgeId,
    reconcileSeconds: config.firewallReconcileSeconds,
    log,
    ingress: {
      httpPort: config.ingressHttpPort,
      httpsPort: config.ingressHttpsPort,
      platformDomain: config.platformDomain,
      box: secretBoxFor(config),
      localCa: { dataDir: config.dataDir, platformName: config.platformName },
    },
  });
  return {
    async stop() {
      await edge.stop();
      await sql.end({ timeout: 5 });
    },
  };
});
