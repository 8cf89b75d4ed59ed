// Downloads and file sessions (DECISIONS.md §6 "The edge gateway"): the gateway alone carries the bytes
// of a volume's files, so they never pass through the API process. `GET /download?token=T` spends a
// download ticket (single use; the file is the path signed into it); `GET` and `PUT /files?path=P` with
// `Authorization: Bearer T` use a file session (the whole volume, any number of requests for 15
// minutes). Files are opened through the confined file layer's streams (no link followed, nothing
// outside the volume); an upload goes to a temporary file in its directory and is renamed over P only
// once complete and within the volume's size.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create as contentDisposition } from 'content-disposition';
import type { Logger } from 'pino';
import type { Sql } from '../db/client.js';
import type { Clock } from '../clock.js';
import type { KeyRing } from '../auth/crypto/signing-keys.js';
import type { SubstrateDriver } from '../substrate/driver.js';
import { ApiError, internalError } from '../http/errors.js';
import { FileLayerError } from '../substrate/local/files/index.js';
import { isStorageFull, STORAGE_FULL_DETAIL } from '../substrate/storage-full.js';
import type { OpenedVolumeFile, PendingVolumeFile, VolumeFileAccess } from '../substrate/volume-access.js';
import type { ConnectionLimits } from './limits.js';
import { fileProblem, refusal, sendProblem } from './problems.js';
import { redeemTicket, useFileSession, type RedeemedTicket } from './store.js';
import { verifyTicket, type TicketClaims } from './tickets.js';

/** Read and write in large blocks: transfers are bulk. */
const CHUNK_BYTES = 1024 * 1024;
/** An upload's blocks received but not yet written; past this the body waits for the disk. */
const QUEUED_BYTES = 4 * CHUNK_BYTES;

export interface FileTransferDeps {
  sql: Sql;
  clock: Clock;
  log: Logger;
  keys: KeyRing;
  substrate: SubstrateDriver;
  limits: ConnectionLimits;
  gatewayId: string;
  /** Transfers under way, each settled once it has answered and cleaned up (close waits for them). */
  inflight: Set<Promise<void>>;
}

const unauthorized = (headers: Record<string, string> = {}) =>
  refusal(
    401,
    'unauthenticated',
    'The ticket is missing, spent, expired or no longer yours to use.',
    headers,
  );

/** Answers the request when it is a file transfer (true); false leaves it to the caller. */
export function handleFileTransfer(
  deps: FileTransferDeps,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  const url = new URL(req.url ?? '/', 'http://gateway');
  if (url.pathname !== '/download' && url.pathname !== '/files') return false;
  const run = url.pathname === '/download' ? download(deps, req, res, url) : session(deps, req, res, url);
  const settled = run.catch((err: unknown) => {
    if (err instanceof ApiError) return sendProblem(res, err);
    if (err instanceof FileLayerError) return sendProblem(res, fileProblem(err));
    // The upload's temporary file is gone already (receiveFile discards it): nothing partial stays.
    if (isStorageFull(err))
      return sendProblem(
        res,
        refusal(507, 'insufficient-storage', STORAGE_FULL_DETAIL, { connection: 'close' }),
      );
    // No path, message or stack in the log: an error of the file system names host paths.
    deps.log.error(
      { code: (err as NodeJS.ErrnoException | null)?.code ?? 'unknown' },
      'file transfer failed',
    );
    sendProblem(res, internalError(err));
  });
  deps.inflight.add(settled);
  void settled.finally(() => deps.inflight.delete(settled));
  return true;
}

async function download(deps: FileTransferDeps, req: IncomingMessage, res: ServerResponse, url: URL) {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw refusal(405, 'method-not-allowed', 'Downloads are GET (or HEAD).', { allow: 'GET' });
  const claim = await verifyTicket(
    deps.keys,
    url.searchParams.get('token') ?? '',
    'download',
    deps.clock.now(),
  );
  const path = claim?.path;
  if (!claim || path === undefined) throw unauthorized();
  await withSlot(deps, claim, async () => {
    const ticket = await redeemTicket(deps.sql, claim, deps.gatewayId, deps.clock.now());
    // The row's path is the one minted; the signature's must be the same (it is what the caller saw).
    if (!ticket || ticket.details.path !== path) throw unauthorized();
    await sendFile(res, filesOf(deps, ticket), path, req.method === 'HEAD');
  });
}

async function session(deps: FileTransferDeps, req: IncomingMessage, res: ServerResponse, url: URL) {
  if (req.method !== 'GET' && req.method !== 'PUT' && req.method !== 'HEAD') {
    throw refusal(405, 'method-not-allowed', 'A file session takes GET, HEAD and PUT.', {
      allow: 'GET, PUT',
    });
  }
  const header = req.headers.authorization ?? '';
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? '';
  const claim = await verifyTicket(deps.keys, token, 'file_session', deps.clock.now());
  if (!claim) throw unauthorized({ 'www-authenticate': 'Bearer' });
  const path = url.searchParams.get('path');
  if (path === null) {
    throw refusal(400, 'invalid-request', 'The query parameter path is missing.', {}, [
      { location: 'query', pointer: 'path', message: 'is required' },
    ]);
  }
  await withSlot(deps, claim, async () => {
    const ticket = await useFileSession(deps.sql, claim, deps.gatewayId, deps.clock.now());
    if (!ticket) throw unauthorized({ 'www-authenticate': 'Bearer' });
    const files = filesOf(deps, ticket);
    if (req.method === 'PUT') await receiveFile(req, res, files, path, Number(ticket.details.volume_bytes));
    else await sendFile(res, files, path, req.method === 'HEAD');
  });
}

async function withSlot(
  deps: FileTransferDeps,
  claim: TicketClaims,
  work: () => Promise<void>,
): Promise<void> {
  if (!deps.limits.take(claim.userId, claim.resourceId))
    throw refusal(429, 'rate-limited', 'Too many transfers open at once; retry when one ends.', {
      'retry-after': '1',
    });
  try {
    await work();
  } finally {
    deps.limits.give(claim.userId, claim.resourceId);
  }
}

function filesOf(deps: FileTransferDeps, ticket: RedeemedTicket): VolumeFileAccess {
  const files =
    typeof ticket.details.volume_id === 'string'
      ? deps.substrate.volumeFiles(ticket.details.volume_id)
      : null;
  if (!files)
    throw refusal(503, 'service-unavailable', "The volume's files cannot be reached now; retry later.", {
      'retry-after': '2',
    });
  return files;
}

/** Streams the file at `path` as the answer (exported for scripts/bench/transfers.ts). */
export async function sendFile(
  res: ServerResponse,
  files: VolumeFileAccess,
  path: string,
  headOnly: boolean,
): Promise<void> {
  const file = await files.streams.openRead(path);
  try {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(file.entry.size_bytes ?? 0),
      'content-disposition': contentDisposition(file.entry.name),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    if (headOnly) {
      res.end();
      return;
    }
    // The length announced is the file's at open: a file growing meanwhile is sent as it was then.
    // readAt, not a node stream of a descriptor: the file may be open inside an LXD cluster.
    const size = file.entry.size_bytes ?? 0;
    if (size === 0) res.end();
    else await pipeline(Readable.from(chunksOf(file, size)), res);
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** The file's first `size` bytes, a block at a time (a file cut short meanwhile ends early). */
async function* chunksOf(file: OpenedVolumeFile, size: number): AsyncGenerator<Buffer> {
  for (let position = 0; position < size;) {
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - position));
    const read = await file.readAt(buffer, position);
    if (read === 0) return;
    position += read;
    yield read === buffer.length ? buffer : buffer.subarray(0, read);
  }
}

/** Receives the request body into `path`, atomically, within the volume's size (answers 201 and the entry). */
export async function receiveFile(
  req: IncomingMessage,
  res: ServerResponse,
  files: VolumeFileAccess,
  path: string,
  volumeBytes: number,
): Promise<void> {
  const pending = await files.streams.createPending(path);
  const writes = new WriteQueue(pending);
  let committed = false;
  try {
    const room = volumeBytes - (await files.streams.usedBytes()) + pending.replacedBytes;
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > room) throw tooLarge(room);
    let position = 0;
    let batch: Buffer[] = [];
    let batched = 0;
    const flush = async () => {
      if (batched === 0) return;
      const buffers = batch;
      const bytes = batched;
      batch = [];
      batched = 0;
      await writes.push(buffers, bytes, position);
      position += bytes;
    };
    for await (const chunk of req as AsyncIterable<Buffer>) {
      if (position + batched + chunk.length > room) throw tooLarge(room);
      batch.push(chunk);
      batched += chunk.length;
      if (batched >= CHUNK_BYTES) await flush();
    }
    await flush();
    await writes.drained();
    if (req.readableAborted || !req.complete)
      throw refusal(400, 'invalid-request', 'The upload was cut short.');
    const entry = await pending.commit();
    committed = true;
    answer(res, 201, entry);
  } finally {
    if (!committed) {
      // A write still under way must land before its file goes.
      await writes.drained().catch(() => undefined);
      await pending.discard().catch(() => undefined);
    }
  }
}

/**
 * An upload's blocks written one after another behind the body as it arrives: waiting for each write
 * before reading on left the connection idle while the disk worked, and the disk idle while it refilled
 * (the profile: the process 57 % idle at a quarter of the disk's rate). At most QUEUED_BYTES wait, so a
 * slow disk still holds the client back. The first failure is kept and answered by the next push.
 */
class WriteQueue {
  private readonly waiting: { done: Promise<void>; bytes: number }[] = [];
  private queued = 0;
  private tail: Promise<void> = Promise.resolve();
  private failure: { err: unknown } | null = null;

  constructor(private readonly file: PendingVolumeFile) {}

  async push(buffers: Buffer[], bytes: number, position: number): Promise<void> {
    if (this.failure) throw this.failure.err;
    const done = this.tail.then(() => this.file.writeAt(buffers, position));
    // Kept, not thrown here: the next push or drained() answers it, and nothing is left unhandled.
    done.catch((err: unknown) => (this.failure ??= { err }));
    this.tail = done;
    this.waiting.push({ done, bytes });
    this.queued += bytes;
    while (this.queued > QUEUED_BYTES) {
      const oldest = this.waiting.shift()!;
      this.queued -= oldest.bytes;
      await oldest.done;
    }
  }

  /** Settles once every write has landed; the first failure, if any. */
  async drained(): Promise<void> {
    this.waiting.length = 0;
    this.queued = 0;
    await this.tail;
  }
}

function tooLarge(room: number): ApiError {
  return refusal(
    413,
    'payload-too-large',
    `The upload does not fit in the volume (${Math.max(0, room)} bytes free).`,
    {
      connection: 'close',
    },
  );
}

function answer(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}
