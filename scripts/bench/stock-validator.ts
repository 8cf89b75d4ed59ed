// The "before" of the before/after: an unpatched express-openapi-validator 5.6.2, made from the
// installed (patched) copy by reversing patches/express-openapi-validator+5.6.2.patch with
// patch-package's own code, and checked byte for byte against the published package. It lives under
// node_modules/.cache so that its dependencies resolve from the project's node_modules.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PACKAGE = 'express-openapi-validator';
const VERSION = '5.6.2';
export const PATCH_FILE = `patches/${PACKAGE}+${VERSION}.patch`;
/** A string the patched code carries (its explanatory comment names the patch file). */
const MARKER = PATCH_FILE;
/** sha256 of the files the patch touches, as published in express-openapi-validator-5.6.2.tgz. */
const PUBLISHED_SHA256: Record<string, string> = {
  'dist/middlewares/openapi.metadata.js': 'c03c297d5d40e61001e1a96452b678e3c04553643287fcb57960d66167956af0',
  'dist/openapi.validator.js': '4aeeccbf0932a2c1978aac7a82e1c6c6b48ac7925709c3b318a65b77e20d8f99',
  'dist/middlewares/parsers/req.parameter.mutator.js': '47fd274775ad50f8dba34b87249c774a28a4c02b2be2f76aff4fc7a126dde812',
  'dist/middlewares/openapi.request.validator.js': '612f10cbd40caf9c9a6d17ab339d2084c6a5cc5dcdeaccd47b67d87374375b33',
  'dist/middlewares/util.js': 'af762e148e232975f3e0a4b49d142651463a5d0af65d4505d8e735887708b147',
};

interface PatchEffect {
  type: string;
  path: string;
}
interface PatchPackageInternals {
  parsePatchFile(contents: string): PatchEffect[];
  reversePatch(effects: PatchEffect[]): PatchEffect[];
  executeEffects(
    effects: PatchEffect[],
    options: { dryRun: boolean; cwd: string; bestEffort: boolean },
  ): void;
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Throws unless node_modules holds express-openapi-validator 5.6.2 with the patch applied. */
export function assertPatchedInstall(root: string): string {
  const dir = join(root, 'node_modules', PACKAGE);
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string })
    .version;
  if (version !== VERSION)
    throw new Error(`${PACKAGE} ${version} is installed; ${PATCH_FILE} is for ${VERSION}`);
  for (const file of Object.keys(PUBLISHED_SHA256)) {
    if (!readFileSync(join(dir, file), 'utf8').includes(MARKER)) {
      throw new Error(
        `${PACKAGE} is installed without ${PATCH_FILE} (${file} is unpatched): run \`npx patch-package\``,
      );
    }
  }
  return join(dir, 'dist', 'index.js');
}

/** Builds the unpatched copy; returns the path of its dist/index.js. */
export function prepareStockValidator(root: string): string {
  const installed = join(root, 'node_modules', PACKAGE);
  const cacheRoot = join(root, 'node_modules', '.cache', 'svc-bench');
  const copy = join(cacheRoot, 'node_modules', PACKAGE);
  rmSync(cacheRoot, { recursive: true, force: true });
  mkdirSync(join(cacheRoot, 'node_modules'), { recursive: true });
  cpSync(installed, copy, { recursive: true });

  const require = createRequire(join(root, 'package.json'));
  const pp: PatchPackageInternals = {
    ...(require('patch-package/dist/patch/parse') as Pick<PatchPackageInternals, 'parsePatchFile'>),
    ...(require('patch-package/dist/patch/reverse') as Pick<PatchPackageInternals, 'reversePatch'>),
    ...(require('patch-package/dist/patch/apply') as Pick<PatchPackageInternals, 'executeEffects'>),
  };
  const effects = pp.parsePatchFile(readFileSync(join(root, PATCH_FILE), 'utf8'));
  pp.executeEffects(pp.reversePatch(effects), { dryRun: false, cwd: cacheRoot, bestEffort: false });

  for (const [file, expected] of Object.entries(PUBLISHED_SHA256)) {
    const path = join(copy, file);
    if (!existsSync(path) || sha256(path) !== expected) {
      throw new Error(
        `reversing ${PATCH_FILE} did not give the published ${file}; is the patch out of date?`,
      );
    }
  }
  const touched = effects.map((e) => e.path.replace(`node_modules/${PACKAGE}/`, ''));
  const unchecked = touched.filter((f) => !(f in PUBLISHED_SHA256));
  if (unchecked.length > 0)
    throw new Error(`${PATCH_FILE} touches ${unchecked.join(', ')}: add the published sha256`);
  return join(copy, 'dist', 'index.js');
}

/**
 * Makes `import 'express-openapi-validator'` load the stock copy at `path` (prepareStockValidator's):
 * call it before anything imports the validator, and import what uses it dynamically after.
 */
export function useStockValidator(path: string): void {
  const target = JSON.stringify(pathToFileURL(path).href);
  const hooks = `export async function resolve(specifier, context, next) {
    if (specifier === 'express-openapi-validator') return { url: ${target}, format: 'commonjs', shortCircuit: true };
    return next(specifier, context);
  }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
