// What svcctl's command line is made of. Commands are described lazily: a group lists its
// subcommands and a runnable command builds its options only when the command line reaches it, so
// start-up does not grow with the number of operations.

export interface OptionSpec {
  /** `--error-id`. */
  readonly long: string;
  /** `-o`. */
  readonly short?: string;
  /** The value's placeholder (`<integer>`); absent for a flag that takes no value. */
  readonly value?: string;
  readonly description: string;
  /** The help section it is listed under. */
  readonly group: string;
  /** Where its value is stored; a `--no-x` flag shares the key of `--x`. */
  readonly key: string;
  /** For a flag without a value: the value it stores. Default true. */
  readonly flagValue?: boolean;
  /** Turns the text into the stored value; `previous` is the value so far, for repeatable flags. Throws to refuse. */
  readonly parse?: (raw: string, previous: unknown) => unknown;
  readonly choices?: readonly string[];
  /** What shell completion offers as its value, where `choices` does not say (an enum the request checks). */
  readonly values?: readonly string[];
  /** Must be given (checked only when the command runs, never for --help). */
  readonly mandatory?: boolean;
}

export interface ArgumentSpec {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
  /** The last argument only: takes every remaining operand (`discovery mark <key...>`). */
  readonly variadic?: boolean;
  /** What shell completion offers for it (`config set KEY`: base-url, output); the command checks. */
  readonly values?: readonly string[];
}

/** A command that runs: its arguments, its own options and what it does. */
export interface Runnable {
  /** Paragraphs for its help, below the usage line. */
  readonly description: string;
  readonly arguments: readonly ArgumentSpec[];
  readonly options: readonly OptionSpec[];
  run(input: ParsedInput): Promise<void>;
}

export interface CommandSpec {
  readonly name: string;
  /** One line, for the parent's listing. */
  readonly summary: string;
  /** How the parent's listing names it: `get [options] <hostname>`. */
  readonly term: string;
  /** The parent's listing section. */
  readonly listGroup?: string;
  /** Paragraphs for the help of a group that does not run itself. */
  readonly description?: string;
  /** Left out of its parent's listing (another command covers it); it still runs and has its help. */
  readonly hidden?: boolean;
  subcommands(): readonly CommandSpec[];
  /** Absent for a pure group. */
  runnable?(): Runnable | Promise<Runnable>;
}

/** What a command's run() receives. */
export interface ParsedInput {
  /** The command words, `['public', 'incidents', 'list']`. */
  readonly words: readonly string[];
  readonly args: readonly string[];
  /** The command's own options, by key. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Global options given on the command line, by key (a later occurrence wins). */
  readonly globals: Readonly<Record<string, unknown>>;
}
