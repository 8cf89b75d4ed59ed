// commander, loaded with require(): its CommonJS entry loads about twice as fast as going through
// its ESM wrapper (no CJS-to-ESM export analysis), which matters on every start-up (`--help` budget
// 150 ms, see scripts/startup-bench.ts). Import commander's values from here, not from 'commander'.
import { createRequire } from 'node:module';
import type * as Commander from 'commander';

const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Argument, Command, CommanderError, Help, InvalidArgumentError, Option } = commander;
export type Argument = Commander.Argument;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type Help = Commander.Help;
export type InvalidArgumentError = Commander.InvalidArgumentError;
export type Option = Commander.Option;
