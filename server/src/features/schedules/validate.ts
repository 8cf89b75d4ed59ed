// A schedule is checked whole, as it would be stored (a PATCH merged onto what is there), and every
// problem is reported at once with its pointer (400 `invalid-field-value`).
import { invalidFieldValue, type ValidationIssue } from '../../http/errors.js';
import { MAX_BACKUPS } from '../backups/handlers.js';
import { isTimeZone, nextRunAfter, parseCron } from './cron.js';
import type { ScheduleAction, ScheduleFields } from './store.js';

export interface ScheduleInput {
  name?: string;
  cron?: string;
  timezone?: string;
  action?: ScheduleAction;
  command?: string | null;
  keep?: number | null;
  enabled?: boolean;
}

const issue = (field: string, message: string): ValidationIssue => ({
  location: 'body',
  pointer: `/${field}`,
  message,
});

/**
 * `current` merged with `input`, checked, with its next run from `now`. A changed action drops the
 * command or keep the new action takes no more, unless the request sends one (refused then).
 */
export function resolveSchedule(
  current: ScheduleFields | null,
  input: ScheduleInput,
  now: Date,
): ScheduleFields {
  const action = input.action ?? current!.action;
  const actionChanged = current !== null && action !== current.action;
  const carried = <T>(v: T | null | undefined, old: T | null) =>
    v !== undefined ? v : actionChanged ? null : old;
  const merged = {
    name: (input.name ?? current?.name ?? '').trim(),
    cron: (input.cron ?? current?.cron ?? '').trim(),
    timezone: input.timezone ?? current?.timezone ?? 'UTC',
    action,
    command: carried(input.command, current?.command ?? null),
    keep: carried(input.keep, current?.keep ?? null),
    enabled: input.enabled ?? current?.enabled ?? true,
  };
  const errors: ValidationIssue[] = [];
  if (merged.name === '') errors.push(issue('name', 'The name is blank.'));
  const tzOk = isTimeZone(merged.timezone);
  if (!tzOk) errors.push(issue('timezone', `${JSON.stringify(merged.timezone)} is not an IANA time zone.`));
  const parsed = parseCron(merged.cron, tzOk ? merged.timezone : 'UTC');
  if (typeof parsed === 'string') errors.push(issue('cron', parsed));
  if (merged.action === 'command') {
    if (merged.command === null || merged.command.trim() === '') {
      errors.push(issue('command', 'Action command needs the console line to send.'));
    } else if (/[\r\n\0]/.test(merged.command)) {
      errors.push(issue('command', 'The command is one console line: no line break.'));
    }
  } else if (merged.command !== null) {
    errors.push(issue('command', `Action ${merged.action} takes no command.`));
  }
  if (merged.action === 'backup') {
    if (merged.keep === null)
      errors.push(issue('keep', 'Action backup needs keep: how many backups to keep.'));
    else if (merged.keep < 1 || merged.keep > MAX_BACKUPS) {
      errors.push(issue('keep', `keep is 1 to ${MAX_BACKUPS}, the backups a volume may hold.`));
    }
  } else if (merged.keep !== null) {
    errors.push(issue('keep', `Action ${merged.action} keeps no backups.`));
  }
  const next = errors.length === 0 ? nextRunAfter(merged.cron, merged.timezone, now) : null;
  if (errors.length === 0 && next === null) errors.push(issue('cron', 'The pattern never comes round.'));
  if (errors.length > 0) throw invalidFieldValue('The schedule is not valid.', errors);
  return { ...merged, next_run_at: merged.enabled ? next : null };
}
