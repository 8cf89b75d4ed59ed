// What a product's workload runs (SUBSTRATE.md "The catalog the embedded default ships"): the catalog's
// `workload_program` names one of the small programs here. Each speaks a real command console on its
// stdin/stdout (the agent holds them for the gateway) and listens on the address and port its
// environment names. A real game server replaces one by naming another program; nothing else changes.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Looked up when a command is made, not on import: the programs import this file too, and the unit
// image of the LXD substrate bundles them without tsx.
const tsxLoader = () => pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
export const WORKLOAD_PROGRAMS = ['block-game', 'arena-game', 'web-app'] as const;
export type WorkloadProgram = (typeof WORKLOAD_PROGRAMS)[number];

/**
 * The environment seam the agent sets (agent.ts workloadEnv): `SVC_BIND_ADDRESS`, the unit's own
 * loopback address (none: the program listens nowhere, so two units never contend for one port), and
 * `SVC_PUBLIC_ENDPOINTS`, whose `internal_port` (the catalog's `endpoints`) is where the local edge
 * forwards the unit's allocations.
 */
export const LISTEN_ENV = { address: 'SVC_BIND_ADDRESS', endpoints: 'SVC_PUBLIC_ENDPOINTS' } as const;

/** The command of a workload running `program`; null when the product has none (an unknown name too). */
export function workloadCommand(program: string | null | undefined): string[] | null {
  const known = WORKLOAD_PROGRAMS.find((p) => p === program);
  if (!known) return null;
  return [process.execPath, '--import', tsxLoader(), fileURLToPath(new URL(`./${known}.ts`, import.meta.url))];
}
