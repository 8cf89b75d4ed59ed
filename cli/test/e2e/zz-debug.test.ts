import { it } from 'vitest';
import { startTestApp } from '../../../test/support/app.js';
import { createIncident } from '../../../server/src/features/public/store.js';
import { runCli } from '../support/run-cli.js';
it('debug', async () => {
  const app = await startTestApp();
  await createIncident(app.sql, { title: 'Storage degraded', message: 'Volumes in fra-1 are slow\nsecond line', startedAt: new Date('2026-11-21T11:00:00Z') }, app.clock.now());
  const env = { SVCCTL_BASE_URL: app.baseUrl };
  for (const args of [
    ['public', 'resellers', 'by-host', 'nope.example'],
    ['public', 'assets', 'get', 'not-a-uuid'],
    ['public', 'client-errors', 'create', '--data', '{"error_id":"e1","message":"m","bogus":1}'],
    ['public', 'client-errors', 'create', '--data', '[1]'],
    ['public', 'incidents', 'list', '-o', 'table'],
    ['public', 'capabilities', '-o', 'table'],
    ['public', 'capabilities', '-o', 'yaml'],
    ['api', 'GET', '/public/incidents?x=1', '-o', 'yaml'],
    ['api', 'GET', '/nope'],
    ['public', 'incidents', 'list', '--bogus'],
    ['public', 'incidnets'],
    ['public'],
  ]) {
    const r = await runCli(args, { env });
    console.log(`$ svcctl ${args.join(' ')}\n[exit ${r.code}]\n--stdout--\n${r.stdout}--stderr--\n${r.stderr}`);
  }
  await app.close();
}, 120_000);
