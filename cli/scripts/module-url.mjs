// Injected into dist/svcctl.cjs by build.mjs as the bundled modules' import.meta.url: the bundle's own
// URL (it is CommonJS, so __filename is defined there).
import { pathToFileURL } from 'node:url';

export const __svcctl_module_url = pathToFileURL(__filename).href;
