// The unit agent (SUBSTRATE.md "The unit contract"): runs the unit's workload, applies each new contract
// the platform writes beside it (or refuses it, keeping the previous one), and acknowledges what it
// applied in status.json. Started by the local driver; stops on SIGTERM or when its unit is deleted.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { UnitSignalSpec } from '../../../generated/unit-signal.js';
import { readIfPresent } from '../substrate/local/atomic-file.js';
import { readImageFile } from '../substrate/local/images.js';
import { layoutOfUnitDir, UNIT_FILES } from '../substrate/local/layout.js';
import { runsWithArg, waitUntil } from '../substrate/local/proc.js';
import { startConsoleHub, type ConsoleHub } from './console.js';
import { decide } from './contract.js';
import { agentLog, type AgentLog } from './log.js';
import { loadState, writeApplied, writeStatus } from './state.js';
import { startMachineSsh } from './ssh.js';
import { startMachineScreen } from './screen.js';
import { readUnit, type AgentUnit } from './unit.js';
import { watchUnitDir } from './watch.js';
import { endOrphan, superviseWorkload, type Workload } from './workload.js';
import { confinedLaunch } from './confined.js';
import { machineInitCommand } from '../substrate/local/machine-init.js';
import { prepareUnit, removeUnitNetwork, SANDBOX_PATH } from '../substrate/local/sandbox/index.js';

/** How long a new agent waits for the driver to record its pid before deciding it is a stray. */
const CLAIM_TIMEOUT_MS = 5_000;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The substrate the agent runs on, as a machine's screen and SSH sessions name it: the LXD driver sets
 * SVC_SUBSTRATE in the instance's environment; the local driver passes its agents no such variable.
 */
export function agentSubstrate(env: NodeJS.ProcessEnv = process.env): string {
  const name = env.SVC_SUBSTRATE;
  return name && /^[a-z][a-z0-9-]{0,31}$/.test(name) ? name : 'local';
}

export interface Agent {
  /** Stops the workload and lets go of the watch; the process may then exit. */
  stop(): Promise<void>;
  /** Settles when the agent stopped, by stop() or because its unit directory is gone. */
  readonly stopped: Promise<void>;
}

export async function startAgent(unitDir: string, log: AgentLog = agentLog()): Promise<Agent | null> {
  if (!(await claimUnit(unitDir))) {
    log.warn('agent.pid names another agent of this unit; exiting');
    return null;
  }

  const unit = await readUnit(unitDir);
  const substrate = agentSubstrate();
  const volumeDir = layoutOfUnitDir(unitDir).volumeDir(unit.volumeId);
  const state = await loadState(unitDir);
  let lastText: string | null = null;

  const report = async () =>
    writeStatus(unitDir, state, unit.kind === 'machine' ? await readImageFile(volumeDir) : undefined);

  // Serialised: a watch event during a check asks for one more check after it, not a second one beside it.
  let checking: Promise<void> | null = null;
  let again = false;
  const check = (): Promise<void> => {
    if (checking) {
      again = true;
      return checking;
    }
    checking = (async () => {
      do {
        again = false;
        await checkSignal();
      } while (again);
    })()
      .catch((err: unknown) =>
        log.warn(`could not apply the contract: ${(err as NodeJS.ErrnoException).code ?? 'error'}`),
      )
      .finally(() => (checking = null));
    return checking;
  };

  async function checkSignal(): Promise<void> {
    const text = await readIfPresent(join(unitDir, UNIT_FILES.signal));
    if (text === null || text === lastText) return;
    lastText = text;
    const decision = decide(text, state.observedGeneration, state.applied, new Date());
    if (decision.kind === 'refuse') {
      state.lastError = { generation: decision.generation, errors: decision.errors };
      const why = decision.errors.map((e) => `${e.pointer || '(document)'} ${e.message}`).join('; ');
      log.warn(
        `refused contract generation ${decision.generation}, keeping generation ${state.observedGeneration ?? 'none'}: ${why}`,
      );
    } else {
      await writeApplied(unitDir, decision.spec, endpointsJson(unit, decision.spec));
      state.applied = decision.spec;
      state.observedGeneration = decision.spec.generation;
      state.lastError = null;
      log.info(`applied contract generation ${decision.spec.generation}`);
    }
    await report();
  }

  // The local substrate confines every program of the unit (substrate/local/sandbox/); on LXD the agent
  // runs inside the unit's container, which is the confinement. Prepared before the first report, so a
  // unit said to run already has the files (mount points) and network it runs with.
  const confinement =
    substrate === 'local'
      ? await prepareUnit({
          id: unit.id,
          kind: unit.kind,
          volumeDir,
          address: unit.address,
          limits: unit.limits,
        })
      : null;

  // A restart (the node or the agent died) applies the current contract again and acknowledges it.
  await check();
  if (lastText === null) await report();

  let workload: Workload | null = null;
  let hub: ConsoleHub | null = null;
  const workloadPid = join(unitDir, UNIT_FILES.workloadPid);
  if (unit.command) {
    await endOrphan(workloadPid, log);
    hub = await startConsoleHub(unitDir);
    workload = superviseWorkload({
      console: hub,
      command: unit.command,
      cwd: confinement ? '/' : volumeDir,
      env: () => workloadEnv(unit, state.applied, confinement ? '/' : volumeDir),
      pidFile: workloadPid,
      log,
      ...(confinement
        ? { launch: confinedLaunch({ id: unit.id, unitDir }, confinement, { hostEtc: true }) }
        : {}),
    });
  } else if (unit.kind === 'machine' && confinement && (await exists(confinement.root))) {
    // The machine's init (sshd) in its own confinement, with root's capabilities inside it.
    await endOrphan(workloadPid, log);
    const init = machineInitCommand();
    workload = superviseWorkload({
      command: init.command,
      cwd: '/',
      env: () => ({ PATH: SANDBOX_PATH, HOME: '/root', LANG: 'C.UTF-8', ...init.env }),
      pidFile: workloadPid,
      log,
      launch: confinedLaunch({ id: unit.id, unitDir }, confinement, {
        capabilities: true,
        tmpfs: ['/run'],
        hostname: unit.id.slice(0, 8),
      }),
    });
  }

  const ssh =
    unit.kind === 'machine' && unit.address && !confinement
      ? await startMachineSsh({ id: unit.id, address: unit.address, volumeDir, substrate }, log).catch(
          (err: unknown) => {
            log.warn(`ssh could not listen: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
            return null;
          },
        )
      : null;

  const screen =
    unit.kind === 'machine'
      ? await startMachineScreen(
          {
            id: unit.id,
            unitDir,
            substrate,
            consoleText: `machine ${unit.id} (${substrate} substrate)\nimage: ${(await readImageFile(volumeDir)) ?? 'none'}`,
          },
          log,
          confinement,
        ).catch((err: unknown) => {
          log.warn(`screen could not start: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
          return null;
        })
      : null;

  let done!: () => void;
  const stopped = new Promise<void>((resolve) => (done = resolve));
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      watch.close();
      await workload?.stop().catch(() => undefined);
      await ssh?.close().catch(() => undefined);
      await screen?.close().catch(() => undefined);
      await hub?.close().catch(() => undefined);
      if (confinement) await removeUnitNetwork(unit.id).catch(() => undefined);
      done();
    })());
  const watch = watchUnitDir(unitDir, UNIT_FILES.signal, {
    change: () => void check(),
    tick: () =>
      void displaced(unitDir).then((other) => {
        if (other === null || stopping) return;
        log.warn(`agent.pid names another running agent of this unit (pid ${other}); stopping`);
        void stop();
      }),
    gone: () => {
      log.info('unit directory is gone; stopping');
      void stop();
    },
  });
  log.info(`agent running ${unit.kind} ${unit.id}${unit.command ? ' with its command' : ''}`);
  return { stop, stopped };
}

/**
 * The driver writes agent.pid just after spawning us. Two control planes starting the same unit at once
 * both spawn an agent, but only the pid written last is the unit's: the other agent leaves at once when
 * that one runs, or after a deadline when nobody ever names it.
 */
async function claimUnit(unitDir: string): Promise<boolean> {
  const pidFile = join(unitDir, UNIT_FILES.agentPid);
  let mine = false;
  await waitUntil(async () => {
    if (!(await exists(unitDir))) return true;
    const pid = Number((await readIfPresent(pidFile))?.trim());
    mine = pid === process.pid;
    return mine || (Number.isInteger(pid) && pid > 0 && (await runsWithArg(pid, unitDir)));
  }, CLAIM_TIMEOUT_MS);
  return mine;
}

/**
 * A unit has one agent, the one agent.pid names. Should a driver have recorded another while this one
 * runs, this one gives way, or two would run the same workload. A missing file displaces nobody (the
 * driver removes it only after this agent stopped).
 */
async function displaced(unitDir: string): Promise<number | null> {
  const pid = Number((await readIfPresent(join(unitDir, UNIT_FILES.agentPid)).catch(() => null))?.trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  return (await runsWithArg(pid, unitDir)) ? pid : null;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The workload's environment: the unit's own, not the agent's (nothing of the host leaks in beyond a
 * PATH), and SVC_PUBLIC_ENDPOINTS from the contract when it carries an override.
 */
function workloadEnv(unit: AgentUnit, applied: UnitSignalSpec | null, home: string): NodeJS.ProcessEnv {
  return {
    PATH: home === '/' ? SANDBOX_PATH : (process.env.PATH ?? DEFAULT_PATH),
    HOME: home,
    ...unit.env,
    ...(unit.address ? { SVC_BIND_ADDRESS: unit.address } : {}),
    SVC_PUBLIC_ENDPOINTS: endpointsJson(unit, applied),
  };
}

/** The endpoints in force: the contract's override, else what the unit was created with, else none. */
function endpointsJson(unit: AgentUnit, applied: UnitSignalSpec | null): string {
  if (applied?.publicEndpoints) return JSON.stringify(applied.publicEndpoints);
  return unit.env.SVC_PUBLIC_ENDPOINTS ?? '[]';
}
