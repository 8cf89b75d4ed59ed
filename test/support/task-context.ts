// A job task's context made from a test app, for tests that run a task's function directly (no queue):
// the app's pool, config, clock and secret box, a silent log, no mail, and a worker that is not stopping.
import { pino } from 'pino';
import type { TaskContext } from '../../server/src/jobs/context.js';
import type { TestApp } from './app.js';

export function taskContextOf(app: TestApp, overrides: Partial<TaskContext> = {}): TaskContext {
  return {
    sql: app.sql,
    config: app.config,
    log: pino({ level: 'silent' }),
    clock: app.clock,
    box: app.box,
    mail: null as never,
    substrate: app.substrate ?? (null as never),
    stopping: new AbortController().signal,
    job: { id: 'test', attempts: 1, maxAttempts: 1, key: null },
    ...overrides,
  };
}
