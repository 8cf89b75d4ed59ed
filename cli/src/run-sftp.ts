// `svcctl sftp enable | disable SERVICE_ID`: the account's state is the command's word (sftpUpdate).
// `sftp show` and `sftp rotate` are the generated commands. Imported when one runs.
import type { ParsedInput } from './argv/spec.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

export async function runSftpSwitch(input: ParsedInput, enabled: boolean): Promise<void> {
  const [id] = input.args as [string];
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client = await openClient(settings);
  await writeResult(await client.sftpUpdate({ path: { id }, body: { enabled } }), settings);
}
