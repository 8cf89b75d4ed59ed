// Issue 33 item 6: an install killed between creating its temporary file and renaming it (a reinstall
// killed -9 in its install phase) leaves `os-release.<pid>.<hex>.tmp`, 0 bytes; the resumed install
// removes it. The kill is simulated by what it leaves: the files of a writer whose process is gone.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createSubstrate } from '../../server/src/substrate/index.js';

const dataDir = join(process.cwd(), '.tmp', `install-leftovers-${randomUUID()}`);
const substrate = createSubstrate('local', { dataDir });
afterAll(async () => {
  await substrate.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('removes the temporary files a killed install left in etc/', async () => {
  const volumeId = randomUUID();
  await substrate.ensureVolume({ id: volumeId, sizeGb: 1 });
  const etc = join(dataDir, 'volumes', volumeId, 'rootfs', 'etc');
  await mkdir(etc, { recursive: true });
  await writeFile(join(etc, 'os-release.4242.0badc0de.tmp'), '');
  await writeFile(join(etc, 'svc-image.4242.0badc0de.tmp'), '');
  // A file of the customer's that merely looks alike stays.
  await writeFile(join(etc, 'os-release.bak.tmp'), 'kept');
  await substrate.installImage(volumeId, 'debian-12');
  const left = (await readdir(etc)).filter((n) => n.startsWith('os-release') || n.startsWith('svc-image'));
  expect(left.sort()).toEqual(['os-release', 'os-release.bak.tmp', 'svc-image']);
});
