// The edge's allocations: a listener on HOST:external_port for each (forward-tcp.ts, forward-udp.ts), and,
// where the edge may program the kernel, the allocations into units' own networks DNATed there as well
// (forward-kernel.ts). The kernel's rule then takes every packet for the port before the listener could,
// so the listener only holds the port (no other program can bind it, and an allocation that cannot be
// bound is reported as not forwarded, as before) and serves whatever the DNAT does not match. Both paths
// hold a connection to the same ingress rules, so either may serve it.
import type { Logger } from 'pino';
import type { DesiredPort } from './desired.js';
import { admits, type IngressRules } from './firewall.js';
import {
  inUnitNetwork,
  kernelForwardingProblem,
  startKernelForwarding,
  type KernelForwarder,
} from './forward-kernel.js';
import { forwardTcp, type TcpForwarder } from './forward-tcp.js';
import { forwardUdp, type UdpForwarder } from './forward-udp.js';
import type { KernelUnit } from './kernel-rules.js';

/** `auto`: the kernel where it may, else the proxy; `kernel`: the kernel or fail to start; `proxy`: never the kernel. */
export type ForwardingMode = 'auto' | 'kernel' | 'proxy';

export interface AllocationTraffic {
  path: 'kernel' | 'proxy';
  /** Flows the kernel's DNAT sent in (a TCP connection, or a UDP client's address and port). */
  kernelFlows: number;
  /** Connections (TCP) or clients (UDP) the listener admitted and forwarded itself. */
  proxyFlows: number;
}

export interface Forwarding {
  /** Whether allocations into units' networks are forwarded by the kernel. */
  readonly kernel: boolean;
  /** Forwards exactly `ports`, admitting by `rules` (in force before any port opens or any rule is written). */
  apply(ports: readonly DesiredPort[], rules: IngressRules): Promise<void>;
  /** The allocations whose port is bound now. */
  bound(): string[];
  traffic(): Promise<Map<string, AllocationTraffic>>;
  close(): Promise<void>;
}

interface Listener {
  spec: DesiredPort;
  forwarder: TcpForwarder | UdpForwarder;
}

const sameBinding = (a: DesiredPort, b: DesiredPort) =>
  a.externalIp === b.externalIp && a.externalPort === b.externalPort && a.protocol === b.protocol;

export async function startForwarding(options: {
  host: string;
  mode: ForwardingMode;
  log: Pick<Logger, 'info' | 'warn'>;
  /** Which of these unit ids are of this edge's database (forward-kernel.ts adopts only those). */
  ours: (unitIds: string[]) => Promise<Set<string>>;
  /** Units of another substrate (LXD) have no network of their own here: proxy only. */
  proxyOnly?: boolean;
}): Promise<Forwarding> {
  const { host, mode, log } = options;
  const listeners = new Map<string, Listener>();
  // Null until the first apply: a listener refuses everything before it knows its rules (an empty map
  // would admit everything).
  let rules: IngressRules | null = null;
  const kernel = mode === 'proxy' || options.proxyOnly ? null : await kernelForwarder();

  async function kernelForwarder(): Promise<KernelForwarder | null> {
    const problem = kernelForwardingProblem(host);
    if (problem && mode === 'kernel')
      throw new Error(`the edge cannot forward through the kernel: ${problem}`);
    if (problem) {
      log.info({ reason: problem }, 'edge forwards in user space');
      return null;
    }
    try {
      return await startKernelForwarding(host, options.ours);
    } catch (err) {
      if (mode === 'kernel') throw err;
      log.warn(
        { err: (err as Error).message },
        'the host refused the edge its kernel rules; forwarding in user space',
      );
      return null;
    }
  }

  const viaKernel = (port: DesiredPort) => kernel !== null && inUnitNetwork(port.targetAddress);

  const admitter = (port: DesiredPort) => (remoteAddress: string, remotePort: number) =>
    rules !== null &&
    admits(
      rules.get(port.resourceId),
      port.protocol,
      remoteAddress,
      remotePort,
      listeners.get(port.id)?.spec.targetPort ?? port.targetPort,
    );

  async function open(port: DesiredPort): Promise<void> {
    const target = { address: port.targetAddress, port: port.targetPort };
    try {
      const forwarder =
        port.protocol === 'tcp'
          ? await forwardTcp(host, port.externalPort, target, admitter(port))
          : await forwardUdp(host, port.externalPort, target, admitter(port));
      listeners.set(port.id, { spec: port, forwarder });
    } catch (err) {
      // Left out of the live state (so the API reports it degraded) and tried again next reconcile.
      log.warn(
        {
          allocation: port.id,
          port: port.externalPort,
          protocol: port.protocol,
          code: (err as NodeJS.ErrnoException).code,
        },
        'edge could not open a port',
      );
    }
  }

  /** The kernel's share: bound allocations into units' networks, by unit, with the unit's rules. */
  function kernelUnits(current: IngressRules): KernelUnit[] {
    const units = new Map<string, KernelUnit>();
    for (const { spec } of listeners.values()) {
      if (!viaKernel(spec)) continue;
      let unit = units.get(spec.resourceId);
      if (!unit) {
        unit = {
          unitId: spec.resourceId,
          address: spec.targetAddress,
          ports: [],
          rules: current.get(spec.resourceId) ?? [],
        };
        units.set(spec.resourceId, unit);
      }
      unit.ports.push({
        id: spec.id,
        protocol: spec.protocol,
        externalPort: spec.externalPort,
        targetPort: spec.targetPort,
      });
    }
    // Sorted, so an unchanged set writes the same chains (forward-kernel.ts compares them to skip a write).
    for (const unit of units.values()) unit.ports.sort((a, b) => a.id.localeCompare(b.id));
    return [...units.values()];
  }

  return {
    kernel: kernel !== null,
    async apply(ports, next) {
      rules = next;
      const wanted = new Map(ports.map((p) => [p.id, p]));
      for (const [allocationId, listener] of [...listeners]) {
        const port = wanted.get(allocationId);
        if (port && sameBinding(port, listener.spec)) {
          listener.forwarder.retarget({ address: port.targetAddress, port: port.targetPort });
          listener.spec = port;
          continue;
        }
        listeners.delete(allocationId);
        await listener.forwarder.close();
      }
      for (const port of ports) if (!listeners.has(port.id)) await open(port);
      await kernel?.apply(kernelUnits(next));
    },
    bound: () => [...listeners.keys()],
    async traffic() {
      const flows = kernel ? await kernel.flows() : new Map<string, number>();
      return new Map(
        [...listeners].map(([id, { spec, forwarder }]) => [
          id,
          {
            path: viaKernel(spec) ? ('kernel' as const) : ('proxy' as const),
            kernelFlows: flows.get(id) ?? 0,
            proxyFlows: forwarder.connections(),
          },
        ]),
      );
    },
    async close() {
      await kernel?.release();
      for (const listener of listeners.values()) await listener.forwarder.close();
      listeners.clear();
    },
  };
}
