// `svcctl firewall replace --file F`: the ruleset from a JSON or YAML file (or stdin with -), either
// the array of rules itself or the request body `{rules: [...]}`.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { UsageError } from './errors.js';

async function readAll(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readRulesFile(file: string): Promise<{ rules: unknown[] }> {
  let text: string;
  try {
    text = await readAll(file);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON or YAML`);
  }
  if (Array.isArray(parsed)) return { rules: parsed };
  if (parsed && typeof parsed === 'object' && Array.isArray((parsed as { rules?: unknown }).rules)) {
    return parsed as { rules: unknown[] };
  }
  throw new UsageError(`${file} must hold an array of rules or {"rules": [...]}`);
}
