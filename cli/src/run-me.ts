// `svcctl me avatar set FILE`. Imported when it runs.
import { basename } from 'node:path';
import type { ParsedInput } from './argv/spec.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { readImage } from './image-file.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

export async function runAvatarSet(input: ParsedInput): Promise<void> {
  const [file] = input.args;
  if (file === undefined) throw new UsageError("missing required argument 'FILE'");
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const bytes = await readImage(file);
  const client = await openClient(settings);
  // The server recognises the image by its bytes; the name is only a courtesy.
  const me = await client.uploadAvatar(bytes, { filename: file === '-' ? 'avatar' : basename(file) });
  await writeResult(me, settings);
}
