// `schedules list` in table mode (issue 35): one row per schedule with its next run in this machine's
// local time, since a customer reads "when does it run" on their own clock; json and yaml keep UTC.
import { isRecord, renderTable, type Column } from './table.js';

/** An ISO time as this machine's local time with its zone (`2026-11-22 02:30 CET`); null as `-`. */
export function localTime(iso: unknown, timeZone?: string): string {
  if (typeof iso !== 'string') return '-';
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(new Date(iso));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}

const field = (header: string, name: string): Column => ({ header, value: (row) => row[name] });

export const SCHEDULE_COLUMNS: readonly Column[] = [
  field('ID', 'id'),
  field('NAME', 'name'),
  field('CRON', 'cron'),
  field('TIMEZONE', 'timezone'),
  {
    header: 'ACTION',
    value: (row) =>
      row.action === 'command'
        ? `command: ${String(row.command)}`
        : row.action === 'backup'
          ? `backup (keep ${String(row.keep)})`
          : row.action,
  },
  field('ENABLED', 'enabled'),
  { header: 'NEXT_RUN (LOCAL)', value: (row) => localTime(row.next_run_at) },
  field('LAST_STATUS', 'last_status'),
];

/** The rows, then how many of the ceiling are used. */
export function schedulesTable(answer: unknown): unknown {
  if (!isRecord(answer) || !Array.isArray(answer.data)) return answer;
  return `${renderTable(answer.data, SCHEDULE_COLUMNS).trimEnd()}\n\n${answer.data.length} of ${String(answer.max_schedules)} schedules\n`;
}
