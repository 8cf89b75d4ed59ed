// `svcctl whoami`: GET /me through the profile's client, printed in the output format.
import type { ParsedInput } from './argv/spec.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { resolveSettings } from './settings.js';

export async function runWhoami(input: ParsedInput): Promise<void> {
  const settings = await resolveSettings(input.globals as GlobalFlags);
  const client = await openClient(settings);
  await writeResult(await client.meGet(), settings);
}
