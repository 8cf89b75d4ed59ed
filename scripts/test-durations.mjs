// Writes test/durations.json, the seconds each test file took in a full run, from the JSON report
// that run wrote (`VITEST_JSON_REPORT=.tmp/vitest-report.json npm test`, as .ci/run does). The test
// sequencer (test/support/sequencer.ts) starts the longest files first, so no long file starts last
// and leaves the other workers idle; run this after a full run when files were added or split.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2] ?? '.tmp/vitest-report.json', 'utf8'));
const durations = {};
for (const file of report.testResults) {
  durations[relative(process.cwd(), file.name)] = Math.round((file.endTime - file.startTime) / 1000);
}
const sorted = Object.fromEntries(
  Object.entries(durations).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
);
writeFileSync('test/durations.json', JSON.stringify(sorted, null, 2) + '\n');
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
