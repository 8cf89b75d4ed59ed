// Entry of the unit agent: `node <its bundle> <unitDir>` (program-bundle.ts; through tsx without esbuild).
// The local driver runs it detached, its output going to the unit's agent.log. Exits 0 when stopped, 1
// when it cannot run.
import { resolve } from 'node:path';
import { startAgent } from './agent.js';
import { agentLog } from './log.js';

const log = agentLog();
const unitDir = process.argv[2];
if (!unitDir) {
  log.warn('usage: main.ts <unitDir>');
  process.exit(2);
}

try {
  const agent = await startAgent(resolve(unitDir), log);
  if (!agent) process.exit(0);
  process.once('SIGTERM', () => void agent.stop());
  process.once('SIGINT', () => void agent.stop());
  await agent.stopped;
  log.info('agent stopped');
  process.exit(0);
} catch (err) {
  // The message, not the stack: enough to fix unit.json, nothing of the machine's insides.
  log.warn(`agent failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
