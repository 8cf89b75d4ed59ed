// Once per test run: a PostgreSQL (TEST_DATABASE_URL, else an embedded one in a temp dir) and a
// migrated template database that every test file clones.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { connect } from '../../server/src/db/client.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { databaseUrl, TEMPLATE_DB } from './db-url.js';
import { lxdInstalled, startLxdCluster, type LxdCluster } from '../../scripts/lxd/cluster.js';

let embedded: EmbeddedDatabase | null = null;
let dir: string | null = null;

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    /** A two-member LXD cluster's socket URL where LXD is installed and we are root, else null. */
    lxdUrl: string | null;
  }
}

let lxd: LxdCluster | null = null;
let lxdDir: string | null = null;

export async function setup(project: TestProject): Promise<void> {
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dir = await mkdtemp(join(tmpdir(), 'svc-test-pg-'));
    embedded = await startEmbeddedPostgres({ dir, persistent: false });
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

async function startLxd(): Promise<string | null> {
  if (process.env.TEST_LXD === 'off' || !lxdInstalled() || process.getuid?.() !== 0) return null;
  // Short: LXD's unix socket path must fit in 108 bytes.
  lxdDir = await mkdtemp(join(tmpdir(), 'svc-lxd-'));
  lxd = await startLxdCluster(lxdDir, 2);
  return lxd.url;
}

export async function teardown(): Promise<void> {
  if (lxd) await lxd.stop();
  if (lxdDir) await rm(lxdDir, { recursive: true, force: true }).catch(() => undefined);
  if (embedded) await embedded.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}
