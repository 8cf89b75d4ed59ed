// `npm run edge`: the local edge alone (edge.ts). Same environment as `npm start`: DATABASE_URL, or else
// the embedded database of DATA_DIR that a running `npm start` serves. `npm start` runs one as its child
// (EDGE=on, child.ts). SIGTERM/SIGINT close its ports and exit 0; 1 on failure, 2 on a configuration error.
import { runningDatabaseUrl } from '../db/running-cluster.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connect } from '../db/client.js';
import { createLogger } from '../http/logging.js';
import { stopWithParent } from '../process/parent-pipe.js';
import { createSubstrate } from '../substrate/index.js';
import { startEdge } from './edge.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`edge: ${err.message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  // Two connections: one held by LISTEN, one for reads and reports.
  const sql = connect(await runningDatabaseUrl(config), { max: 2 });
  const edge = await startEdge({
    sql,
    // Units of this machine's processes listen where the edge forwards already.
    substrate: config.substrate === 'lxd' ? createSubstrate('lxd', { dataDir: config.dataDir, lxd: config.lxd }) : undefined,
    host: config.host,
    id: config.edgeId,
    reconcileSeconds: config.firewallReconcileSeconds,
    log,
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'edge stopping');
    await edge.stop();
    await sql.end({ timeout: 5 });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  stopWithParent((reason) => void stop(reason));
}

main().catch((err: unknown) => {
  process.stderr.write(`edge: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
