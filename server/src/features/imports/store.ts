// All SQL of server imports (document 2 §2 "Server import", §4 "Server imports").
import type { Db } from '../../db/client.js';

export type ImportStatus = 'preparing' | 'running' | 'cleaning_up' | 'succeeded' | 'failed' | 'cancelled';
export const FINISHED: readonly ImportStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface ImportRow {
  id: string;
  service_instance_id: string;
  volume_id: string;
  operation_id: string;
  host: string;
  address: string;
  port: number;
  username: string;
  remote_path: string;
  target_path: string;
  delete_extraneous: boolean;
  status: ImportStatus;
  cancel_requested: boolean;
  /** bigints, as postgres.js reads them. */
  bytes_transferred: string;
  bytes_total: string | null;
  files_transferred: number;
  files_total: number | null;
  current_file: string | null;
  error: string | null;
  paused_unit_ids: string[];
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `i.id, i.service_instance_id, i.volume_id, i.operation_id, i.host, host(i.address) as address, i.port,
  i.username, i.remote_path, i.target_path, i.delete_extraneous, i.status, i.cancel_requested, i.bytes_transferred,
  i.bytes_total, i.files_transferred, i.files_total, i.current_file, i.error, i.paused_unit_ids, i.created_at,
  i.updated_at, i.completed_at`;

export const LIST_LIMIT = 50;

export async function listImports(db: Db, serviceId: string): Promise<ImportRow[]> {
  return db<ImportRow[]>`
    select ${db.unsafe(COLUMNS)} from service_imports i
    where i.service_instance_id = ${serviceId}
    order by i.created_at desc, i.id desc
    limit ${LIST_LIMIT}`;
}

export async function findImport(
  db: Db,
  serviceId: string,
  importId: string,
  options: { lock?: boolean } = {},
): Promise<ImportRow | undefined> {
  const [row] = await db<ImportRow[]>`
    select ${db.unsafe(COLUMNS)} from service_imports i
    where i.id = ${importId} and i.service_instance_id = ${serviceId}
    ${options.lock ? db`for update` : db``}`;
  return row;
}

export async function importOfOperation(db: Db, operationId: string): Promise<ImportRow | undefined> {
  const [row] = await db<ImportRow[]>`
    select ${db.unsafe(COLUMNS)} from service_imports i where i.operation_id = ${operationId}`;
  return row;
}

export async function insertImport(
  db: Db,
  row: {
    id: string;
    serviceId: string;
    volumeId: string;
    operationId: string;
    host: string;
    address: string;
    port: number;
    username: string;
    remotePath: string;
    deleteExtraneous: boolean;
    passwordSealed: string;
    createdBy: string | null;
  },
  now: Date,
): Promise<ImportRow> {
  const [inserted] = await db<ImportRow[]>`
    insert into service_imports as i (id, service_instance_id, volume_id, operation_id, host, address, port, username,
      remote_path, delete_extraneous, status, password_sealed, created_by, created_at, updated_at)
    values (${row.id}, ${row.serviceId}, ${row.volumeId}, ${row.operationId}, ${row.host}, ${row.address}, ${row.port},
      ${row.username}, ${row.remotePath}, ${row.deleteExtraneous}, 'preparing', ${row.passwordSealed}, ${row.createdBy},
      ${now}, ${now})
    returning ${db.unsafe(COLUMNS)}`;
  return inserted!;
}

/** When the volume's import before `row` started (null for its first): the copy's racy-clean line. */
export async function previousImportStart(db: Db, row: ImportRow): Promise<Date | null> {
  const [prev] = await db<{ created_at: Date }[]>`
    select created_at from service_imports
    where volume_id = ${row.volume_id} and id <> ${row.id}
      and (created_at, id) < (${row.created_at}, ${row.id})
    order by created_at desc, id desc limit 1`;
  return prev?.created_at ?? null;
}

export async function requestCancel(db: Db, importId: string, now: Date): Promise<ImportRow> {
  const [row] = await db<ImportRow[]>`
    update service_imports i set cancel_requested = true, updated_at = ${now}
    where i.id = ${importId}
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

export async function sealedPassword(db: Db, importId: string): Promise<string | null> {
  const [row] = await db<{ password_sealed: string | null }[]>`
    select password_sealed from service_imports where id = ${importId}`;
  return row?.password_sealed ?? null;
}

export async function cancelRequested(db: Db, importId: string): Promise<boolean> {
  const [row] = await db<{ cancel_requested: boolean }[]>`
    select cancel_requested from service_imports where id = ${importId}`;
  return row?.cancel_requested ?? false;
}

/** The status while unfinished (a finished import never moves again). */
export async function setStatus(db: Db, importId: string, status: ImportStatus, now: Date): Promise<void> {
  await db`
    update service_imports set status = ${status}, updated_at = ${now}
    where id = ${importId} and status not in ('succeeded', 'failed', 'cancelled')`;
}

export async function setPaused(db: Db, importId: string, unitIds: string[]): Promise<void> {
  await db`update service_imports set paused_unit_ids = ${unitIds}::uuid[] where id = ${importId}`;
}

export async function setTotals(db: Db, importId: string, bytes: number, files: number, now: Date): Promise<void> {
  await db`
    update service_imports set bytes_total = ${bytes}, files_total = ${files}, bytes_transferred = 0,
      files_transferred = 0, updated_at = ${now}
    where id = ${importId}`;
}

export async function setProgress(
  db: Db,
  importId: string,
  progress: { bytes: number; files: number; currentFile: string | null },
  now: Date,
): Promise<void> {
  await db`
    update service_imports set bytes_transferred = ${progress.bytes}, files_transferred = ${progress.files},
      current_file = ${progress.currentFile}, updated_at = ${now}
    where id = ${importId} and status = 'running'`;
}

/** The end, however it came: the password erased with it. */
export async function finishImport(
  db: Db,
  importId: string,
  outcome: { status: 'succeeded' | 'failed' | 'cancelled'; error: string | null },
  now: Date,
): Promise<boolean> {
  const rows = await db`
    update service_imports set status = ${outcome.status}, error = ${outcome.error}, outcome = ${outcome.status},
      password_sealed = null,
      current_file = null, completed_at = ${now}, updated_at = ${now}
    where id = ${importId} and status not in ('succeeded', 'failed', 'cancelled')
    returning 1`;
  return rows.length > 0;
}

export async function erasePassword(db: Db, importId: string): Promise<void> {
  await db`update service_imports set password_sealed = null where id = ${importId}`;
}

/** The service's volume (its one resource of kind `volume`). */
export async function volumeOf(db: Db, serviceId: string): Promise<string | undefined> {
  const [row] = await db<{ id: string }[]>`
    select id from service_resources
    where service_instance_id = ${serviceId} and kind = 'volume' and deleted_at is null
    order by created_at, id limit 1`;
  return row?.id;
}

/**
 * How the copy ended (before cleaning up); `error` with a failure. A cancel asked for before this wins over
 * a copy that ended meanwhile (seed 001 §3: a cancel while preparing or running ends `cancelled`): decided
 * in the one statement, so no cancel lands between a look and the write.
 */
export async function decideOutcome(
  db: Db,
  importId: string,
  outcome: 'succeeded' | 'failed' | 'cancelled',
  error: string | null,
): Promise<void> {
  await db`
    update service_imports
    set outcome = case when cancel_requested and ${outcome}::text = 'succeeded' then 'cancelled' else ${outcome}::text end,
      error = ${error}
    where id = ${importId} and outcome is null`;
}

export async function decidedOutcome(
  db: Db,
  importId: string,
): Promise<{ outcome: 'succeeded' | 'failed' | 'cancelled' | null; error: string | null }> {
  const [row] = await db<{ outcome: 'succeeded' | 'failed' | 'cancelled' | null; error: string | null }[]>`
    select outcome, error from service_imports where id = ${importId}`;
  return row ?? { outcome: null, error: null };
}
