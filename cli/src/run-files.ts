// `svcctl files cat|get|put`: a file's text on stdout (fileRead), and transfers of any size through the
// edge gateway with the tickets the API hands out (the bytes never pass through the API): `get` with a
// download ticket, `put` with a file session. On a terminal a progress bar is drawn on stderr for
// transfers over a mebibyte; --quiet draws none.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { request as requestTls } from 'node:https';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ParsedInput } from './argv/spec.js';
import { CliError } from './errors.js';
import { ExitCode, exitCodeForStatus } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

const BAR_WIDTH = 24;
const REDRAW = '\r\x1b[2K';
const SHOW_PROGRESS_FROM = 1024 * 1024;

async function clientFor(input: ParsedInput) {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  return { client: await openClient(settings), quiet: (input.globals as GlobalFlags).quiet === true };
}

/** `files cat SERVICE_ID RESOURCE_ID PATH`: the text itself on stdout, as it is. */
export async function runFilesCat(input: ParsedInput): Promise<void> {
  const [id, resourceId, path] = input.args as [string, string, string];
  const { client } = await clientFor(input);
  const file = await client.fileRead({ path: { id, resource_id: resourceId }, query: { path } });
  process.stdout.write(file.content);
}

/** `files get SERVICE_ID RESOURCE_ID PATH [LOCAL]`: downloads to LOCAL (default the file's name here; - for stdout). */
export async function runFilesGet(input: ParsedInput): Promise<void> {
  const [id, resourceId, path, local] = input.args as [string, string, string, string | undefined];
  const { client, quiet } = await clientFor(input);
  const ticket = await client.fileDownloadTicketCreate({
    path: { id, resource_id: resourceId },
    body: { path },
  });
  const url = new URL(`${ticket.base_url}/download`);
  url.searchParams.set('token', ticket.token);
  const response = await send(url, 'GET', {});
  if (response.statusCode !== 200) throw await refusal(response, path);
  const total = Number(response.headers['content-length'] ?? NaN);
  const progress = bar(total, quiet);
  if (local === '-') {
    await pipeline(response, progress, process.stdout);
    return;
  }
  const target = local ?? basename(path);
  const into = (await stat(target).catch(() => null))?.isDirectory() ? join(target, basename(path)) : target;
  // Written beside its name and renamed when complete: an interrupted download leaves no half file.
  const partial = join(dirname(into), `.${basename(into)}.svcctl-partial`);
  try {
    await pipeline(response, progress, createWriteStream(partial));
    await rename(partial, into);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  if (!quiet) process.stderr.write(`Downloaded ${path} to ${into}\n`);
}

/** `files put SERVICE_ID RESOURCE_ID LOCAL PATH`: uploads LOCAL (- for stdin) to PATH, replacing it atomically. */
export async function runFilesPut(input: ParsedInput): Promise<void> {
  const [id, resourceId, local, path] = input.args as [string, string, string, string];
  const { client, quiet } = await clientFor(input);
  const size = local === '-' ? NaN : (await stat(local)).size;
  const ticket = await client.fileSessionTicketCreate({ path: { id, resource_id: resourceId } });
  const url = new URL(`${ticket.base_url}/files`);
  url.searchParams.set('path', path);
  const headers: Record<string, string> = {
    authorization: `Bearer ${ticket.token}`,
    'content-type': 'application/octet-stream',
  };
  if (Number.isFinite(size)) headers['content-length'] = String(size);
  const source = local === '-' ? process.stdin : createReadStream(local, { highWaterMark: 1024 * 1024 });
  const response = await send(url, 'PUT', headers, source.pipe(bar(size, quiet)));
  if (response.statusCode !== 201) throw await refusal(response, path);
  const entry = JSON.parse(await text(response)) as { path: string; size_bytes: number };
  if (!quiet) process.stderr.write(`Uploaded ${entry.size_bytes} bytes to ${entry.path}\n`);
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: NodeJS.ReadableStream,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? requestTls : request)(url, { method, headers });
    req.on('response', resolve);
    req.on('error', (err) =>
      reject(new CliError(`could not reach the gateway at ${url.origin}: ${err.message}`, ExitCode.network)),
    );
    if (body) body.pipe(req);
    else req.end();
  });
}

async function text(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function refusal(response: IncomingMessage, path: string): Promise<CliError> {
  const status = response.statusCode ?? 0;
  const body = await text(response).catch(() => '');
  let why = '';
  try {
    // Problem details (DECISIONS.md §2): the code is what a script or a search matches on.
    const parsed = JSON.parse(body) as { detail?: string; code?: string };
    why = [parsed.code, parsed.detail].filter(Boolean).join(': ');
  } catch {
    why = '';
  }
  const what =
    status === 413
      ? `${path} does not fit in the volume`
      : status === 401
        ? 'the gateway refused the ticket (spent, expired, or your access ended)'
        : `the gateway answered ${status} for ${path}`;
  return new CliError(why && status !== 401 ? `${what}: ${why}` : what, exitCodeForStatus(status));
}

/** A pass-through that draws `[####....] 42% 12.3 MiB` on a terminal's stderr for a large transfer. */
function bar(total: number, quiet: boolean): Transform {
  const draw =
    !quiet && process.stderr.isTTY === true && (!Number.isFinite(total) || total >= SHOW_PROGRESS_FROM);
  let done = 0;
  let shown = -1;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      done += chunk.length;
      if (draw) {
        const percent = Number.isFinite(total) && total > 0 ? Math.floor((done / total) * 100) : null;
        const key = percent ?? Math.floor(done / (1024 * 1024));
        if (key !== shown) {
          shown = key;
          const filled = percent === null ? 0 : Math.round((percent / 100) * BAR_WIDTH);
          process.stderr.write(
            `${REDRAW}[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${percent === null ? '   -' : `${String(percent).padStart(3)}%`}  ${(done / 1024 / 1024).toFixed(1)} MiB`,
          );
        }
      }
      callback(null, chunk);
    },
    flush(callback) {
      if (draw && shown !== -1) process.stderr.write('\n');
      callback();
    },
  });
}
