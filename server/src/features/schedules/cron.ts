// Cron patterns and time zones of schedules (DECISIONS.md §8 "Schedules"), read by croner: five fields
// only (croner would take seconds and years too), and DST as croner documents it.
import { Cron } from 'croner';

/** How late a missed run may be and still run once when the platform is back. */
export const MISSED_RUN_GRACE_MS = 60 * 60 * 1000;

/** Whether `name` is an IANA time zone this runtime knows (an offset like `+01:00` is not one). */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The pattern read in `timezone`, or the reason it is refused. */
export function parseCron(cron: string, timezone: string): Cron | string {
  if (cron.trim().split(/\s+/).length !== 5) {
    return 'A cron has exactly five fields: minute hour day-of-month month day-of-week.';
  }
  try {
    return new Cron(cron.trim(), { timezone, mode: '5-part', paused: true });
  } catch (err) {
    return `Not a cron pattern: ${(err as Error).message}`;
  }
}

function pattern(cron: string, timezone: string): Cron {
  const parsed = parseCron(cron, timezone);
  // Stored patterns were checked when written; one refused now is a bug, not the customer's.
  if (typeof parsed === 'string') throw new Error(`stored cron ${JSON.stringify(cron)}: ${parsed}`);
  return parsed;
}

/** The first run strictly after `after`; null when the pattern never matches again. */
export function nextRunAfter(cron: string, timezone: string, after: Date): Date | null {
  return pattern(cron, timezone).nextRun(after);
}

/**
 * Whether a run fell due in (`since`, `now`] no earlier than the grace before now: the claim runs it
 * once however many fell due (a platform down for a day runs an hourly schedule once, or not at all
 * when its latest due time is over an hour ago).
 */
export function dueWithinGrace(cron: string, timezone: string, since: Date, now: Date): boolean {
  const floor = Math.max(since.getTime() - 1, now.getTime() - MISSED_RUN_GRACE_MS);
  const next = pattern(cron, timezone).nextRun(new Date(floor));
  return next !== null && next.getTime() <= now.getTime();
}
