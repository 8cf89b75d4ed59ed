// Log lines a person can read at a terminal in development, JSON for everything else; LOG_FORMAT
// decides when set. The choice is tested as a table, the rendering through a real logger, and the
// whole of it by starting the server (`npm start`'s command) on a real pseudo-terminal (util-linux
// `script`) and on a pipe.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { chooseLogFormat, logDestination } from '../../server/src/http/log-format.js';
import { createLogger } from '../../server/src/http/logging.js';
import { createTestDatabase } from '../support/app.js';

describe('chooseLogFormat', () => {
  it.each([
    ['a terminal in development', { setting: null, terminal: true, env: 'development', want: 'pretty' }],
    ['a terminal in test', { setting: null, terminal: true, env: 'test', want: 'pretty' }],
    ['a terminal in production', { setting: null, terminal: true, env: 'production', want: 'json' }],
    ['a pipe in development', { setting: null, terminal: false, env: 'development', want: 'json' }],
    ['LOG_FORMAT=json at a terminal', { setting: 'json', terminal: true, env: 'development', want: 'json' }],
    [
      'LOG_FORMAT=pretty on a pipe in production',
      { setting: 'pretty', terminal: false, env: 'production', want: 'pretty' },
    ],
  ] as const)('%s', (_name, { setting, terminal, env, want }) => {
    expect(chooseLogFormat(setting, terminal, env)).toBe(want);
  });

  it('reads LOG_FORMAT, and refuses a value it does not know', () => {
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
    expect(loadConfig({}).logFormat).toBeNull();
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow('LOG_FORMAT must be json or pretty, got "xml"');
  });
});

function capture(format: 'json' | 'pretty') {
  const lines: string[] = [];
  const out = { write: (s: string) => void lines.push(s) };
  return { log: createLogger('info', logDestination(format, { out })), lines };
}

describe('logDestination', () => {
  it('pretty: a request is one line of method, route, status and time, its id at the end', () => {
    const { log, lines } = capture('pretty');
    log.info(
      { request_id: 'r-1', method: 'GET', route: '/me', status: 200, duration_ms: 3.14159 },
      'request',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/me 200 3\.1 ms \[r-1\]\n$/);
  });

  it('pretty: other fields stay on the line, still redacted', () => {
    const { log, lines } = capture('pretty');
    log.warn({ dir: '/data', password: 'hunter2' }, 'starting');
    expect(lines[0]).toMatch(/ WARN: starting \{"dir":"\/data","password":"\[redacted\]"\}\n$/);
    expect(lines.join('')).not.toContain('hunter2');
  });

  it('json: the lines are the logger’s own', () => {
    const { log, lines } = capture('json');
    log.info({ request_id: 'r-1', method: 'GET', route: '/me', status: 200, duration_ms: 1 }, 'request');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'request', route: '/me', status: 200 });
  });
});

// The server as `npm start` runs it, on its own database; stdout is a pty under `script`. Production's
// JSON at a terminal and LOG_FORMAT=pretty on a pipe are the table's; each start costs seconds.
describe.skipIf(!existsSync('/usr/bin/script'))('the server at a terminal and on a pipe', () => {
  let db: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  async function serve(env: Record<string, string>, terminal: boolean): Promise<string> {
    const command = `exec "${process.execPath}" --import tsx server/src/main.ts`;
    const child = terminal
      ? spawn('script', ['-qfec', command, '/dev/null'], {
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn('sh', ['-c', command], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000);
        child.stdout!.on('data', () => {
          const m = /API\s+(http:\/\/[\d.:]+)\/api\/v2/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
      });
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      // The request's line is written after its response: wait for it.
      for (let i = 0; i < 200 && !out.includes('/healthz'); i += 1)
        await new Promise((r) => setTimeout(r, 25));
      return out.replace(/\r\n/g, '\n');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }

  const env = (more: Record<string, string>) => ({
    PORT: '0',
    DATABASE_URL: db.url,
    DATA_DIR: join(process.cwd(), '.tmp', 'test-data'),
    WORKER: 'off',
    LOG_LEVEL: 'info',
    NODE_ENV: 'development',
    NO_COLOR: '1',
    LOG_FORMAT: '',
    ...more,
  });
  const requestLine = (out: string) => out.split('\n').find((l) => l.includes('/healthz'));

  it(
    'readable at a terminal in development, JSON on a pipe, and LOG_FORMAT=json wins over the terminal',
    { timeout: 120_000 },
    async () => {
      const [atTerminal, onPipe, jsonAtTerminal] = await Promise.all([
        serve(env({}), true),
        serve(env({}), false),
        serve(env({ LOG_FORMAT: 'json' }), true),
      ]);
      expect(requestLine(atTerminal)).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/healthz 200 \d+\.\d ms \[[^\]]+\]$/,
      );
      for (const out of [onPipe, jsonAtTerminal]) {
        expect(JSON.parse(requestLine(out)!)).toMatchObject({
          msg: 'request',
          method: 'GET',
          route: '/healthz',
          status: 200,
        });
      }
    },
  );
});
