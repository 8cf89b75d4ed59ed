// The volume host instances: one per cluster member, `<prefix>volumes-<member>`, started from the unit
// image with SVC_ROLE=volumes (its PID 1 only waits: image.ts INIT) and no network device. A volume is
// hot-attached to its member's host as the disk device `v-<volumeId>` at /v/<volumeId> on first use, and
// its volume server (volume-server/main.ts) runs there by exec. It holds volumes and nothing else, so
// even a flaw of the file layer reaches only volumes, never a unit's agent or contract, and it works
// whether or not the volume's unit runs. LXD refuses to delete or restore a volume an instance uses:
// the driver detaches it first (detach).
import { isConflict, LxdError, type LxdClient } from './client.js';
import { startExec } from './exec-session.js';
import { findInstance, putDevices, setState, withoutNetwork, type Instance } from './instances.js';
import { VOLUME_SERVER_IN_IMAGE, type UnitImage } from './image.js';
import { execPipe, VolumeSession } from './volume-session.js';
import type { Pool, VolumeRecord } from './volumes.js';

export const volumeDirInHost = (volumeId: string) => `/v/${volumeId}`;
const deviceOf = (volumeId: string) => `v-${volumeId}`;

interface FullInstance extends Instance {
  devices: Record<string, Record<string, string>>;
}

export interface VolumeHostOptions {
  client: LxdClient;
  pool: Pool;
  prefix: string;
  unitImage: () => Promise<UnitImage>;
  /** Runs `work` alone for `key` in this process (serial.ts). */
  serial: <T>(key: string, work: () => Promise<T>) => Promise<T>;
}

export function volumeHosts(options: VolumeHostOptions) {
  const { client, pool, prefix } = options;
  const hostName = (member: string) => `${prefix}volumes-${member}`.replace(/[^A-Za-z0-9-]/g, '-');
  const memberOf = (volume: VolumeRecord) =>
    volume.location && volume.location !== 'none' ? volume.location : 'none';

  /** The member's host, created and started when it is not (two processes may race: both succeed). */
  async function ensureHost(member: string): Promise<FullInstance> {
    const name = hostName(member);
    const { alias } = await options.unitImage();
    let host = (await findInstance(client, name)) as FullInstance | null;
    if (host && host.config['user.svc.image'] !== alias) {
      // Made from an older image, whose volume server may not speak this one's calls: made again.
      if (host.status === 'Running') await setState(client, name, 'stop', true);
      await client.run('DELETE', `/1.0/instances/${name}`).catch((err: unknown) => {
        if (!(err instanceof LxdError && err.status === 404)) throw err;
      });
      host = null;
    }
    if (!host) {
      const devices = await withoutNetwork(client);
      try {
        await client.run(
          'POST',
          '/1.0/instances',
          {
            name,
            type: 'container',
            source: { type: 'image', alias },
            config: {
              'environment.SVC_ROLE': 'volumes',
              'limits.memory': '256MiB',
              'limits.processes': '256',
              'user.svc.image': alias,
              'user.svc.role': 'volumes',
            },
            devices,
          },
          member === 'none' ? undefined : { target: member },
        );
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
      host = (await findInstance(client, name)) as FullInstance;
    }
    if (host.status !== 'Running') {
      try {
        await setState(client, name, 'start');
      } catch (err) {
        // Started by another process meanwhile.
        if (!/already running/i.test((err as Error).message)) throw err;
      }
    }
    return host;
  }

  /** Attaches the volume to its member's host (attached already counts as done); answers the host's name. */
  async function attach(volume: VolumeRecord, volumeId: string): Promise<string> {
    const member = memberOf(volume);
    const name = hostName(member);
    return options.serial(name, async () => {
      const device = deviceOf(volumeId);
      for (let attempt = 0; ; attempt++) {
        const host = await ensureHost(member);
        if (host.devices?.[device]) return name;
        try {
          // PATCH merges devices: another volume's device added meanwhile by another process stays.
          await client.run('PATCH', `/1.0/instances/${name}`, {
            devices: {
              [device]: {
                type: 'disk',
                pool: pool.name,
                source: volume.name,
                path: volumeDirInHost(volumeId),
              },
            },
          });
        } catch (err) {
          if (!isConflict(err)) throw err;
        }
        // Two processes patching at once may each write the devices they read: looked at again.
        const after = (await findInstance(client, name)) as FullInstance | null;
        if (after?.devices?.[device]) return name;
        if (attempt >= 2) throw new LxdError(500, `volume ${volumeId} could not be attached to ${name}`);
      }
    });
  }

  /** Detaches the volume from its member's host; not attached (or no host) is done. */
  async function detach(volume: VolumeRecord, volumeId: string): Promise<void> {
    const name = hostName(memberOf(volume));
    await options.serial(name, async () => {
      const device = deviceOf(volumeId);
      const { metadata: full } = await client
        .call<Record<string, unknown> & { devices: Record<string, unknown> }>('GET', `/1.0/instances/${name}`)
        .catch((err: unknown) => {
          if (err instanceof LxdError && err.status === 404) return { metadata: null };
          throw err;
        });
      if (!full?.devices?.[device]) return;
      const devices = { ...full.devices };
      delete devices[device];
      await putDevices(client, name, full, devices);
    });
  }

  /** A volume server on the volume, in its member's host. */
  async function openSession(volume: VolumeRecord, volumeId: string): Promise<VolumeSession> {
    const name = await attach(volume, volumeId);
    const exec = await startExec(client, name, {
      command: ['/usr/bin/node', VOLUME_SERVER_IN_IMAGE, volumeDirInHost(volumeId), volumeId],
      environment: { PATH: '/bin:/usr/bin' },
      interactive: false,
    });
    return new VolumeSession(execPipe(exec));
  }

  return { attach, detach, openSession, hostName };
}
