// `--data`: the request body as inline JSON, `@file` (JSON, or YAML for .yaml/.yml) or `@-` (stdin),
// the curl convention users already know.
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { UsageError } from './errors.js';

export async function readData(arg: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<unknown> {
  if (!arg.startsWith('@')) return parseJson(arg, '--data');
  const source = arg.slice(1);
  if (source === '-') return parseJson(await text(stdin), '--data @- (stdin)');
  let content: string;
  try {
    content = await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--data ${arg}: cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (/\.ya?ml$/i.test(source)) {
    const { parse } = await import('yaml');
    try {
      return parse(content) as unknown;
    } catch (err) {
      throw new UsageError(`--data ${arg} is not valid YAML: ${(err as Error).message}`);
    }
  }
  return parseJson(content, `--data ${arg}`);
}

function parseJson(content: string, what: string): unknown {
  try {
    return JSON.parse(content);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}
