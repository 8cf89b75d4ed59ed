// All SQL of schedules (DECISIONS.md §8 "Schedules").
import type { Db } from '../../db/client.js';

export type ScheduleAction = 'backup' | 'start' | 'stop' | 'restart' | 'command';
export type RunStatus = 'succeeded' | 'failed' | 'skipped';

export interface ScheduleRow {
  id: string;
  service_instance_id: string;
  name: string;
  cron: string;
  timezone: string;
  action: ScheduleAction;
  command: string | null;
  keep: number | null;
  enabled: boolean;
  next_run_at: Date | null;
  last_run_at: Date | null;
  last_status: RunStatus | null;
  last_error: string | null;
  last_operation_id: string | null;
  /** The last run's operation, when it started one: its outcome is the run's. */
  operation_status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | null;
  operation_error: string | null;
  created_at: Date;
}

const COLUMNS = `s.id, s.service_instance_id, s.name, s.cron, s.timezone, s.action, s.command, s.keep, s.enabled,
  s.next_run_at, s.last_run_at, s.last_status, s.last_error, s.last_operation_id, s.created_at,
  o.status as operation_status, o.error as operation_error`;
const FROM = `service_schedules s left join service_operations o on o.id = s.last_operation_id`;

export async function listSchedules(db: Db, serviceId: string): Promise<ScheduleRow[]> {
  return db<ScheduleRow[]>`
    select ${db.unsafe(COLUMNS)} from ${db.unsafe(FROM)}
    where s.service_instance_id = ${serviceId} order by s.created_at, s.id`;
}

export async function countSchedules(db: Db, serviceId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from service_schedules where service_instance_id = ${serviceId}`;
  return row!.n;
}

export async function findSchedule(db: Db, serviceId: string, id: string): Promise<ScheduleRow | undefined> {
  const [row] = await db<ScheduleRow[]>`
    select ${db.unsafe(COLUMNS)} from ${db.unsafe(FROM)}
    where s.id = ${id} and s.service_instance_id = ${serviceId}`;
  return row;
}

/** What a customer sets; the rest is the platform's. */
export interface ScheduleFields {
  name: string;
  cron: string;
  timezone: string;
  action: ScheduleAction;
  command: string | null;
  keep: number | null;
  enabled: boolean;
  next_run_at: Date | null;
}

export async function insertSchedule(
  db: Db,
  s: ScheduleFields & { id: string; serviceId: string; createdBy: string | null },
  now: Date,
): Promise<void> {
  await db`
    insert into service_schedules (id, service_instance_id, name, cron, timezone, action, command, keep, enabled,
                                   next_run_at, created_by, created_at, updated_at)
    values (${s.id}, ${s.serviceId}, ${s.name}, ${s.cron}, ${s.timezone}, ${s.action}, ${s.command}, ${s.keep},
            ${s.enabled}, ${s.next_run_at}, ${s.createdBy}, ${now}, ${now})`;
}

export async function updateSchedule(db: Db, id: string, s: ScheduleFields, now: Date): Promise<void> {
  await db`
    update service_schedules
    set name = ${s.name}, cron = ${s.cron}, timezone = ${s.timezone}, action = ${s.action}, command = ${s.command},
        keep = ${s.keep}, enabled = ${s.enabled}, next_run_at = ${s.next_run_at}, updated_at = ${now}
    where id = ${id}`;
}

export async function deleteSchedule(db: Db, id: string): Promise<void> {
  await db`delete from service_schedules where id = ${id}`;
}

/** What a run needs of its service, read with the service row locked. */
export interface RunTarget {
  service_id: string;
  service_status: string;
  subscription_status: string;
  project_id: string;
  organization_id: string;
  features: string[];
}

/** Due schedules, soonest first (unlocked: each is claimed on its own, run.ts). */
export async function dueSchedules(
  db: Db,
  now: Date,
  limit: number,
): Promise<{ id: string; service_instance_id: string }[]> {
  return db`
    select id, service_instance_id from service_schedules
    where next_run_at <= ${now} order by next_run_at, id limit ${limit}`;
}

/** Locks the service row, as operations are started under it (operations/engine.ts). */
export async function lockRunTarget(db: Db, serviceId: string): Promise<RunTarget | undefined> {
  const [row] = await db<RunTarget[]>`
    select s.id as service_id, s.status as service_status, sub.status as subscription_status, s.project_id,
           p.organization_id, cp.features
    from service_instances s
    join subscriptions sub on sub.id = s.subscription_id
    join projects p on p.id = s.project_id
    join catalog_products cp on cp.id = s.product_id
    where s.id = ${serviceId}
    for update of s`;
  return row;
}

/** The schedule, locked, if it is still due: a claimer that comes second finds it moved on. */
export async function lockIfDue(db: Db, id: string, now: Date): Promise<ScheduleRow | undefined> {
  const [row] = await db<ScheduleRow[]>`
    select ${db.unsafe(COLUMNS)} from ${db.unsafe(FROM)}
    where s.id = ${id} and s.next_run_at <= ${now}
    for update of s`;
  return row;
}

/** Moves the schedule to its next run; with `run`, records the run that happened now. */
export async function recordClaim(
  db: Db,
  id: string,
  next: Date | null,
  run: { at: Date; status: RunStatus | null; error: string | null; operationId: string | null } | null,
): Promise<void> {
  if (run) {
    await db`
      update service_schedules
      set next_run_at = ${next}, enabled = ${next !== null}, last_run_at = ${run.at}, last_status = ${run.status},
          last_error = ${run.error}, last_operation_id = ${run.operationId}
      where id = ${id}`;
  } else {
    await db`update service_schedules set next_run_at = ${next}, enabled = ${next !== null} where id = ${id}`;
  }
}

/** The outcome of a run that finished after its claim (a console line). */
export async function recordOutcome(
  db: Db,
  id: string,
  at: Date,
  status: RunStatus,
  error: string | null,
): Promise<void> {
  await db`
    update service_schedules set last_status = ${status}, last_error = ${error}
    where id = ${id} and last_run_at = ${at}`;
}
