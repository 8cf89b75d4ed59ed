// How log lines reach standard output: JSON for machines (a log shipper, a container runtime, a pipe),
// readable lines for a person watching `npm start` in a terminal. Only the rendering differs: the
// lines, their keys and their redaction are the logger's (logging.ts) either way.
import { destination as fileDestination, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { Config, LogFormat } from '../config.js';

/**
 * LOG_FORMAT when it is set; otherwise readable lines when standard output is a terminal outside
 * production (someone is reading them), JSON whenever it is not (something is parsing them).
 */
export function chooseLogFormat(
  setting: LogFormat | null,
  stdoutIsTerminal: boolean,
  environment: string,
): LogFormat {
  if (setting !== null) return setting;
  return stdoutIsTerminal && environment !== 'production' ? 'pretty' : 'json';
}

/** Lines are gathered up to this many bytes, or for this long, before one write takes them all. */
const LOG_BUFFER_BYTES = 8 * 1024;
const LOG_FLUSH_MS = 50;

/**
 * Standard output written asynchronously and in batches: under load a write per line (a request's) is a
 * system call and a thread-pool round trip per request; gathered, one write takes many lines, and a line
 * waits at most LOG_FLUSH_MS. pino's destination flushes what is buffered when the process exits, and
 * a crash's exit too; only a SIGKILL loses the last LOG_FLUSH_MS of lines.
 */
export function bufferedStdout(): DestinationStream {
  const out = fileDestination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    out.flush();
  };
  return {
    write(line: string) {
      out.write(line);
      timer ??= setTimeout(flush, LOG_FLUSH_MS).unref();
    },
  };
}

/** Standard output's destination for a loaded configuration, in this process. */
export function stdoutLogDestination(config: Pick<Config, 'logFormat' | 'environment'>): DestinationStream {
  const terminal = process.stdout.isTTY === true;
  const format = chooseLogFormat(config.logFormat, terminal, config.environment);
  // Colour only for a terminal, and never against NO_COLOR (no-color.org).
  return logDestination(format, { colorize: terminal && !process.env.NO_COLOR });
}

/**
 * The logger's destination for a format: standard output written asynchronously (pino's own
 * destination, flushed when the process exits), through the prettifier for `pretty`. The prettifier
 * runs in this thread, line by line as pino writes, so a line is never lost to a worker thread that
 * had not caught up when the process exited.
 */
export function logDestination(
  format: LogFormat,
  options: { out?: DestinationStream; colorize?: boolean } = {},
): DestinationStream {
  const out = options.out ?? bufferedStdout();
  if (format === 'json') return out;
  const pretty = prettyFactory({
    colorize: options.colorize ?? false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    // What is left beside the message stays on the line, as compact JSON.
    singleLine: true,
  });
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      out.write(pretty(readable(entry)));
    },
  };
}

/**
 * A request line reads `GET /me 200 3.1 ms`, and a request id goes at the end of the message, where
 * the eye finds it; every other key stays as it was logged.
 */
export function readable(entry: Record<string, unknown>): Record<string, unknown> {
  const { request_id: requestId, ...out } = entry;
  if (
    out.msg === 'request' &&
    typeof out.method === 'string' &&
    typeof out.route === 'string' &&
    typeof out.status === 'number'
  ) {
    const took = typeof out.duration_ms === 'number' ? ` ${out.duration_ms.toFixed(1)} ms` : '';
    out.msg = `${out.method} ${out.route} ${out.status}${took}`;
    for (const key of ['method', 'route', 'status', 'duration_ms']) delete out[key];
  }
  if (typeof requestId === 'string') out.msg = `${typeof out.msg === 'string' ? out.msg : ''} [${requestId}]`;
  return out;
}
