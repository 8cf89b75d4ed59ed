// Once per test run: a PostgreSQL (TEST_DATABASE_URL, else an embedded one in a temp dir) and a
// migrated template database that every test file clones.
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { connect } from '../../server/src/db/client.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { databaseUrl, TEMPLATE_DB } from './db-url.js';
import { lxdInstalled, startLxdCluster } from '../../scripts/lxd/cluster.js';

let embedded: EmbeddedDatabase | null = null;
let dir: string | null = null;

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    /** A two-member LXD cluster's socket URL where LXD is installed and we are root, else null. */
    lxdUrl: string | null;
  }
}


export async function setup(project: TestProject): Promise<void> {
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dir = await mkdtemp(join(tmpdir(), 'svc-test-pg-'));
    embedded = await startEmbeddedPostgres({ dir, persistent: false, durable: false });
    adminUrl = embedded.url;
  }
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`drop database if exists ${TEMPLATE_DB} with (force)`);
  await admin.unsafe(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const template = connect(databaseUrl(adminUrl, TEMPLATE_DB), { max: 1 });
  await migrate(template);
  await template.end();
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('lxdUrl', await startLxd());
}

/**
 * One cluster for every test run on this machine (runs side by side share it; each test names its own
 * instances), started by the first run that finds none and left running, as a system's LXD would be.
 */
async function startLxd(): Promise<string | null> {
  if (process.env.TEST_LXD === 'off' || !lxdInstalled() || process.getuid?.() !== 0) return null;
  // Short: LXD's unix socket path must fit in 108 bytes.
  const dir = process.env.TEST_LXD_DIR ?? join(tmpdir(), 'svc-test-lxd');
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A run killed while starting the cluster left its lock: older than any start takes.
      const age = Date.now() - (await stat(lock).then((s) => s.mtimeMs, () => Date.now()));
      if (age > 120_000) await rm(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`another test run holds ${lock}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return (await startLxdCluster(dir, 2)).url;
  } catch (err) {
    // The rest of the suite does not depend on LXD: say why its tests are skipped instead of failing all.
    process.stderr.write(`\nLXD is installed but its cluster did not start; LXD tests skipped: ${(err as Error).message}\n`);
    return null;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

export async function teardown(): Promise<void> {
  if (embedded) await embedded.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}
