// The composition root of background work: every area's task handlers, by the names of
// jobs/payloads.ts. The queue (jobs/) knows the names and payloads only; areas export their handlers
// and never import this registry, so neither side imports the other's internals
// (test/architecture/imports.test.ts).
import { AUTH_TASKS } from './features/auth/tasks.js';
import { CERTIFICATE_TASKS } from './certificates/tasks.js';
import { BACKUP_TASKS } from './features/backups/tasks.js';
import { DOMAIN_TASKS } from './features/domains/tasks.js';
import { GAME_SUBDOMAIN_TASKS } from './features/game-subdomains/tasks.js';
import type { TaskName } from './jobs/payloads.js';
import { isPeriodic, type PeriodicTask, type TaskDefinition, type Tasks } from './jobs/task.js';
import { MAIL_TASKS } from './mail/tasks.js';
import { OPERATION_TASKS } from './operations/tasks.js';
import { PRUNE_TASKS } from './prune/tasks.js';
import { SCHEDULE_TASKS } from './features/schedules/tasks.js';
import { METRICS_TASKS } from './features/metrics/tasks.js';
import { VPS_ACCESS_TASKS } from './features/vps-access/tasks.js';

const AREAS = [MAIL_TASKS, AUTH_TASKS, OPERATION_TASKS, DOMAIN_TASKS, PRUNE_TASKS, BACKUP_TASKS, GAME_SUBDOMAIN_TASKS, CERTIFICATE_TASKS, SCHEDULE_TASKS, METRICS_TASKS, VPS_ACCESS_TASKS] as const;
const ALL = { ...MAIL_TASKS, ...AUTH_TASKS, ...OPERATION_TASKS, ...DOMAIN_TASKS, ...PRUNE_TASKS, ...BACKUP_TASKS, ...GAME_SUBDOMAIN_TASKS, ...CERTIFICATE_TASKS, ...SCHEDULE_TASKS, ...METRICS_TASKS, ...VPS_ACCESS_TASKS };

// A name two areas claim would run one area's handler for the other's jobs: refuse to start.
const seen = new Set<string>();
for (const name of AREAS.flatMap((area) => Object.keys(area))) {
  if (seen.has(name)) throw new Error(`task ${name} is registered by two areas`);
  seen.add(name);
}

// Every name of jobs/payloads.ts has a handler (`satisfies`); an area's handler of a name the queue
// does not know fails its own `satisfies AreaTasks`.
export const TASKS: Tasks = ALL satisfies Record<TaskName, TaskDefinition | PeriodicTask>;

/** The periodic tasks (the crontab), by name. */
export const PERIODIC_TASKS: Readonly<Record<string, PeriodicTask>> = Object.fromEntries(
  Object.entries(TASKS).filter((entry): entry is [string, PeriodicTask] => isPeriodic(entry[1])),
);
