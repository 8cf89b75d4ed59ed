// The local edge for a test app: its own connection to the app's database, the app's HOST, and a port
// pool of its own (test files run side by side on one machine), plus a unit program that echoes.
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect, type Sql } from '../../server/src/db/client.js';
import { unitsOfThisDatabase } from '../../server/src/edge/desired.js';
import { startEdge, type Edge, type EdgeOptions } from '../../server/src/edge/edge.js';
import { releaseEgress } from '../../server/src/edge/egress.js';
import { kernelForwardingProblem } from '../../server/src/edge/forward-kernel.js';
import type { TestApp } from './app.js';

/** A pool of `size` ports somewhere in 10000-31999, for PORT_POOL. */
export function randomPortPool(size = 40): string {
  // Below Linux's ephemeral range (32768 up): a port there can be taken by any test's listener on port 0
  // between provisioning and the edge's bind (an SSH port answered by someone else was seen in CI).
  const from = 10000 + randomInt(0, 22000 - size);
  return `${from}-${from + size - 1}`;
}

export interface TestEdge {
  edge: Edge;
  sql: Sql;
  /** Resolves once the edge applied every change made so far. */
  caughtUp(): Promise<void>;
  /** Stops it; the egress rules it applied go too unless `keepEgress` (as a real edge keeps them). */
  stop(options?: { keepEgress?: boolean }): Promise<void>;
}

export async function startTestEdge(
  app: TestApp,
  options: {
    id?: string;
    reconcileSeconds?: number;
    substrate?: EdgeOptions['substrate'];
    /** The HTTP ingress on free ports (default), or off. */
    ingress?: boolean;
    /** How it forwards allocations (server/src/edge/forwarding.ts); default `auto`. */
    forwarding?: EdgeOptions['forwarding'];
  } = {},
): Promise<TestEdge> {
  const sql = connect(app.databaseUrl, { max: 2 });
  const edge = await startEdge({
    sql,
    host: app.config.host,
    id: options.id ?? 'test-edge',
    reconcileSeconds: options.reconcileSeconds ?? app.config.firewallReconcileSeconds,
    heartbeatSeconds: 1,
    substrate: options.substrate,
    forwarding: options.forwarding,
    log: { info: () => {}, warn: () => {}, error: () => {} },
    ingress:
      options.ingress === false
        ? undefined
        : {
            httpPort: 0,
            httpsPort: 0,
            platformDomain: app.config.platformDomain,
            box: app.box,
            localCa: { dataDir: app.config.dataDir, platformName: app.config.platformName },
          },
  });
  return {
    edge,
    sql,
    async caughtUp() {
      const [state] = await app.sql<{ generation: string }[]>`select generation from edge_state`;
      const want = Number(state!.generation);
      const deadline = Date.now() + 10_000;
      while (edge.appliedGeneration() < want) {
        if (Date.now() > deadline) throw new Error(`edge stuck at ${edge.appliedGeneration()} < ${want}`);
        await edge.reconcile();
      }
    },
    async stop({ keepEgress = false } = {}) {
      await edge.stop();
      if (!keepEgress) await releaseEgress((ids) => unitsOfThisDatabase(sql, ids));
      await sql.end({ timeout: 1 });
    },
  };
}

/** The edge's two forwarders, for tests that hold on both: `kernel` where this host lets the edge program netfilter. */
export const FORWARDERS = ['proxy', 'kernel'] as const;
export const kernelForwardingHere = () => kernelForwardingProblem('127.0.0.1') === null;

/** A unit program (UnitSpec.command) echoing tcp and udp on SVC_BIND_ADDRESS at each of ECHO_PORTS. */
export const ECHO_PROGRAM = fileURLToPath(new URL('./echo-unit.mjs', import.meta.url));
