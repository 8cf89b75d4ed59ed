// The README stays a front page (issue 34: it had grown to 1,150 lines): the two commands,
// configuration and a short tour, with each area's guide in docs/<area>.md, named as the API's areas
// in spec/paths/ (or one of the few guides no API area has), every one linked from the README.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NOT_API_AREAS = ['substrate', 'jobs', 'security', 'development'];

it("keeps the README short and links every area's guide in docs/", () => {
  const readme = readFileSync(`${ROOT}/README.md`, 'utf8');
  expect(readme.split('\n').length).toBeLessThan(400);
  const areas = readdirSync(`${ROOT}/spec/paths`).map((f) => f.replace(/\.yaml$/, ''));
  const guides = readdirSync(`${ROOT}/docs`).filter((f) => f.endsWith('.md'));
  expect(guides.length).toBeGreaterThan(10);
  for (const guide of guides) {
    const name = guide.replace(/\.md$/, '');
    expect([...areas, ...NOT_API_AREAS], guide).toContain(name);
    expect(readme, guide).toContain(`(docs/${guide})`);
  }
});
