// Schedule rows as the API answers them (spec/components/schemas/schedules.yaml).
import type { components } from '../../../../generated/api.js';
import type { ScheduleRow } from './store.js';

type Schedule = components['schemas']['Schedule'];

/** A run that started an operation has that operation's outcome; under way, none yet. */
function lastOutcome(row: ScheduleRow): Pick<Schedule, 'last_status' | 'last_error'> {
  if (row.last_status !== null || row.last_operation_id === null) {
    return { last_status: row.last_status, last_error: row.last_error };
  }
  switch (row.operation_status) {
    case 'succeeded':
      return { last_status: 'succeeded', last_error: null };
    case 'failed':
    case 'cancelled':
      return {
        last_status: 'failed',
        last_error: row.operation_error ?? `The operation was ${row.operation_status}.`,
      };
    default:
      return { last_status: null, last_error: null };
  }
}

export function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    action: row.action,
    command: row.command,
    keep: row.keep,
    enabled: row.enabled,
    next_run_at: row.next_run_at?.toISOString() ?? null,
    last_run_at: row.last_run_at?.toISOString() ?? null,
    ...lastOutcome(row),
    last_operation_id: row.last_operation_id,
    created_at: row.created_at.toISOString(),
  };
}
