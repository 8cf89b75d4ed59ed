// Starts the longest test files first (seconds from test/durations.json, written by
// scripts/test-durations.mjs), so the run ends with short files on every worker instead of one long file
// started last. Vitest's own order uses its cache of the last run, which a fresh clone (CI) lacks.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A file the table does not know yet: about the median file. */
const UNKNOWN_SECONDS = 20;

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    let table: Record<string, number> = {};
    try {
      table = JSON.parse(readFileSync(`${root}/test/durations.json`, 'utf8')) as Record<string, number>;
    } catch {
      return super.sort(files);
    }
    const seconds = (f: TestSpecification) => table[relative(root, f.moduleId)] ?? UNKNOWN_SECONDS;
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
