// The local edge (DECISIONS.md §6 "Network", SUBSTRATE.md): opens a listener on HOST:external_port for
// every allocation on its address and forwards it (tcp or udp) to the unit's address and internal port,
// admitting each connection or datagram by the unit's ingress firewall, through the kernel where it may
// (forwarding.ts); on the local substrate it also
// holds the units' outgoing connections to their egress rules (egress.ts) where the host allows. It
// converges on the desired state in PostgreSQL: at once when notified (LISTEN edge_state), and by
// polling, so a missed notification or a port that could not be bound is retried within the reconcile
// interval. It records the generation it
// applied in edge_nodes, and answers the live state on its control listener (control.ts).
import type { SubstrateDriver } from '../substrate/driver.js';
import type { Logger } from 'pino';
import type { Sql } from '../db/client.js';
import { ensurePlatformCertificate } from '../certificates/platform-wildcard.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { CertificateContexts } from './ingress/certificates.js';
import { startIngress, type Ingress } from './ingress/server.js';
import { challengeAnswer, readIngressState } from './ingress/state.js';
import { startControl, type Control } from './control.js';
import { currentGeneration, forgetEdge, readDesired, reportEdge, unitsOfThisDatabase } from './desired.js';
import { startEgress, type EgressEnforcer } from './egress.js';
import { startForwarding, type AllocationTraffic, type ForwardingMode } from './forwarding.js';

export interface EdgeOptions {
  sql: Sql;
  /** The address this edge serves and binds (HOST): allocations whose external_ip it is. */
  host: string;
  id: string;
  /** FIREWALL_RECONCILE_SECONDS: the longest a change waits when no notification arrives. */
  reconcileSeconds: number;
  /** How often the edge says it is alive (and checks the generation); default 5 s. */
  heartbeatSeconds?: number;
  /** The control listener's port (0: any free one). */
  controlPort?: number;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /**
   * The substrate whose units it forwards to, asked to make their ports reachable at their addresses
   * (an LXD unit's proxy devices); absent, the units listen on this machine already (local substrate).
   */
  substrate?: Pick<SubstrateDriver, 'exposePorts'>;
  /** The HTTP ingress (ingress/server.ts); absent, or both ports null, this edge runs none. */
  ingress?: EdgeIngressOptions;
  /** How allocations are forwarded (forwarding.ts); default `auto`. */
  forwarding?: ForwardingMode;
}

export interface EdgeIngressOptions {
  /** INGRESS_HTTP_PORT, INGRESS_HTTPS_PORT: null off, 0 any free port. */
  httpPort: number | null;
  httpsPort: number | null;
  platformDomain: string;
  /** Opens the certificates' sealed keys (the API's ENCRYPTION_KEY). */
  box: SecretBox;
  /** Where the local CA lives, which signs the platform's wildcard certificate when it is missing or due. */
  localCa: { dataDir: string; platformName: string };
}

export interface Edge {
  readonly id: string;
  readonly controlUrl: string;
  /** The ingress's bound ports (null: off). */
  readonly ingressHttpPort: number | null;
  readonly ingressHttpsPort: number | null;
  /** The generation of the desired state last applied. */
  appliedGeneration(): number;
  /** Whether allocations into units' networks are forwarded by the kernel (forwarding.ts). */
  readonly kernelForwarding: boolean;
  /** Per bound allocation, which path forwards it and the flows each path carried. */
  traffic(): Promise<Map<string, AllocationTraffic>>;
  /** Applies the desired state now (tests, and the notification handler). */
  reconcile(): Promise<void>;
  stop(): Promise<void>;
}

export async function startEdge(options: EdgeOptions): Promise<Edge> {
  const { sql, host, id, log } = options;
  const heartbeatSeconds = options.heartbeatSeconds ?? Math.min(5, options.reconcileSeconds);
  const startedAt = new Date();
  let applied = 0;
  let stopped = false;
  // The units whose kernel rules this edge may change: those of its own database (tests run several).
  const ours = (ids: string[]) => unitsOfThisDatabase(sql, ids);
  // Units of another substrate (LXD) are not this host's processes: their egress is not ours to hold.
  const egress: EgressEnforcer = options.substrate
    ? { enforced: false, apply: async () => undefined }
    : await startEgress(log, ours);
  const forwarding = await startForwarding({
    host,
    mode: options.forwarding ?? 'auto',
    log,
    ours,
    proxyOnly: options.substrate !== undefined,
  });

  // One reconcile at a time; a request during one asks for one more after it.
  let running: Promise<void> | null = null;
  let again = false;
  async function apply(): Promise<void> {
    if (ingress && options.ingress) {
      // Before the snapshot, so a certificate issued now is in it (its row bumps the generation too).
      await ensurePlatformCertificate(sql, options.ingress.box, {
        ...options.ingress.localCa,
        platformDomain: options.ingress.platformDomain,
      }).catch((err: unknown) =>
        log.warn({ err: (err as Error).message }, 'edge cannot issue the platform certificate'),
      );
    }
    const desired = await readDesired(sql, host);
    if (options.substrate) {
      for (const [unitId, ports] of desired.exposed) {
        // One unit the substrate cannot reach must not hold up the others' forwarding.
        await options.substrate
          .exposePorts(unitId, ports)
          .catch((err: unknown) =>
            log.warn({ unitId, err: (err as Error).message }, 'could not expose the unit ports'),
          );
      }
    }
    // The snapshot's rules are in force before any of its ports opens (issue 33: a restarted edge admitted a
    // blocked source for 20-40 ms while the ingress below was brought up); forwarding.apply sees to it.
    await forwarding.apply(desired.ports, desired.ingress);
    if (ingress && certificates && options.ingress) {
      await ingress.bindMissing();
      const state = await readIngressState(sql, options.ingress.platformDomain);
      await certificates.update(state.certificates);
      ingress.setRoutes(state.routes);
    }
    // A failure leaves the generation unapplied (the listing stays pending) and is retried next tick.
    await egress.apply(desired.egress);
    applied = desired.generation;
    await reportEdge(sql, report(), applied);
  }
  const reconcile = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await apply();
      } while (again && !stopped);
    })()
      .catch((err: unknown) =>
        log.warn({ err: (err as Error).message }, 'edge reconcile failed; retrying on the next tick'),
      )
      .finally(() => (running = null));
    return running;
  };

  const wantsIngress =
    options.ingress && (options.ingress.httpPort !== null || options.ingress.httpsPort !== null);
  const certificates = wantsIngress
    ? new CertificateContexts(options.ingress!.box, (fields, message) => log.warn(fields, message))
    : null;
  const ingress: Ingress | null =
    wantsIngress && certificates
      ? await startIngress({
          host,
          httpPort: options.ingress!.httpPort,
          httpsPort: options.ingress!.httpsPort,
          certificates,
          challenge: (token) => challengeAnswer(sql, token),
          warn: (fields, message) => log.warn(fields, message),
        })
      : null;
  const report = () => ({
    id,
    address: host,
    controlUrl: control.url,
    heartbeatSeconds,
    startedAt,
    ingressHttpPort: ingress?.httpPort ?? null,
    ingressHttpsPort: ingress?.httpsPort ?? null,
    egressEnforced: egress.enforced,
  });

  const control: Control = await startControl(host, options.controlPort ?? 0, () => ({
    edge_id: id,
    applied_generation: applied,
    allocations: Object.fromEntries(
      forwarding.bound().map((allocationId) => [allocationId, 'normal' as const]),
    ),
  }));

  await reconcile();
  const subscription = await sql
    .listen('edge_state', () => void reconcile())
    .catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, 'edge cannot LISTEN; polling only');
      return null;
    });
  let lastFull = Date.now();
  const tick = setInterval(() => {
    void (async () => {
      // A full pass every reconcile interval retries ports that could not be bound. With a substrate whose
      // units need their ports exposed, every tick is one: a unit's instance may be made (or made again)
      // after the generation that allocated its ports was applied.
      if (options.substrate || Date.now() - lastFull >= options.reconcileSeconds * 1000) {
        lastFull = Date.now();
        return reconcile();
      }
      if ((await currentGeneration(sql)) !== applied) return reconcile();
      await reportEdge(sql, report(), applied);
    })().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'edge heartbeat failed'));
  }, heartbeatSeconds * 1000);

  log.info(
    {
      edge: id,
      host,
      control: control.url,
      ports: forwarding.bound().length,
      forwarding: forwarding.kernel ? 'kernel' : 'proxy',
      http: ingress?.httpPort,
      https: ingress?.httpsPort,
    },
    'edge running',
  );
  return {
    id,
    controlUrl: control.url,
    get ingressHttpPort() {
      return ingress?.httpPort ?? null;
    },
    get ingressHttpsPort() {
      return ingress?.httpsPort ?? null;
    },
    appliedGeneration: () => applied,
    kernelForwarding: forwarding.kernel,
    traffic: () => forwarding.traffic(),
    reconcile,
    async stop() {
      stopped = true;
      clearInterval(tick);
      await subscription?.unlisten().catch(() => undefined);
      await running;
      await control.close();
      await ingress?.close();
      await forwarding.close();
      await forgetEdge(sql, id).catch(() => undefined);
    },
  };
}
