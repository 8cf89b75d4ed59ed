// The API server's main module (server/src/main.ts, what `npm start` runs) as tests start it in a process
// of its own: node's arguments for its bundle (program-bundle.ts), which starts in half the CPU time of
// tsx's loader; the edge, gateway and DNS children of such a server run from their bundles too.
import { programArgs } from '../../server/src/process/program-bundle.js';

export const SERVER_MAIN = 'server/src/main.ts';

/** node's arguments that run `main` (a path from the repository's root; the API server's by default). */
export const serverArgs = (main: string = SERVER_MAIN): Promise<string[]> => programArgs(main);
