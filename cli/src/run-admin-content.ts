// `svcctl admin resellers icon set ID FILE`, `svcctl admin resellers og-image set ID FILE` and the
// `--secret-stdin` of `svcctl admin captcha set`. Imported when one runs.
import { basename } from 'node:path';
import type { ParsedInput, Runnable } from './argv/spec.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { idAndImageArgs, readImage } from './image-file.js';
import { writeResult } from './output/write-result.js';
import { Prompter } from './prompt.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

/** Uploads FILE as the reseller's icon or OG image (a multipart body with the one part `file`). */
export async function runResellerImageSet(
  input: ParsedInput,
  operationId: 'adminResellerIconUpload' | 'adminResellerOgImageUpload',
): Promise<void> {
  const [id, file] = idAndImageArgs(input.args, 'RESELLER_ID');
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const bytes = await readImage(file);
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), file === '-' ? 'image' : basename(file));
  const client = await openClient(settings);
  const reseller = await client.request(operationId, { path: { id }, body: form });
  await writeResult(reseller, settings);
}

/**
 * `admin captcha set`: the generated command, with the secret read from the next line of stdin when
 * `--secret-stdin` is given (typed unseen on a terminal), so it never shows in the process list.
 */
export async function runCaptchaSet(
  generated: Runnable,
  secretKey: string,
  input: ParsedInput,
): Promise<void> {
  if (input.options.secretStdin !== true) return generated.run(input);
  if (input.options[secretKey] !== undefined)
    throw new UsageError('give --secret or --secret-stdin, not both');
  const prompter = new Prompter();
  let secret: string | null;
  try {
    secret = prompter.isTerminal ? await prompter.askHidden('secret: ') : await prompter.readLine();
  } finally {
    prompter.close();
  }
  if (secret === null || secret === '')
    throw new UsageError('--secret-stdin: stdin ended before a line with the secret');
  return generated.run({ ...input, options: { ...input.options, [secretKey]: secret } });
}
