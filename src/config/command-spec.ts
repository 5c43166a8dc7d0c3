import type { FlagName } from './flags.js';

/**
 * What the command line needs to know about a command: its help (summary, usage, example), its
 * own flags and positionals, and which server flags it reads. The commands themselves, with how
 * each runs, are listed in src/commands/; parsing and help here take that list as an argument,
 * so config/ stays the floor everyone reads and imports nothing above it.
 */

/** One of a command's own flags (server flags come from flags.ts). */
export interface CommandFlag<O> {
  /** Short and long names, e.g. ['-f', '--filename']. */
  names: readonly string[];
  /** Placeholder of the value it takes, e.g. 'FILE|DIR|-'; absent for a switch. */
  value?: string;
  description: string;
  /** Records the value in the options; returns a problem (completing "<flag>: ...") when it is not valid. */
  apply(options: O, value: string): string | undefined;
}

/** A command line someone would type, with what it does. */
export interface CommandExample {
  command: string;
  comment: string;
}

/** Everything about a command except how it runs. `O` is the type of its parsed options. */
export interface CommandSpec<O = unknown> {
  /** The word after the binary's name. */
  name: string;
  /** One line for `kube-admission-server help`. */
  summary: string;
  /** The usage line(s), without the leading "Usage: ". */
  usage: readonly string[];
  /** A short paragraph for `<command> --help`: what it does and what its exit codes mean. */
  description: string;
  /** Its own flags. */
  flags: readonly CommandFlag<O>[];
  /** The server flags (and their environment variables) it reads; the others are refused. */
  serverFlags: 'all' | readonly FlagName[];
  examples: readonly CommandExample[];
  /**
   * Outside a pod, --namespace defaults to the namespace the manifests install into
   * (kube-admission-server) rather than `default`: the command answers for the installed server.
   */
  answersForInstall?: boolean;
  /**
   * The command prints: generate mode writes --cert-dir only when it is given (flag or CERT_DIR);
   * otherwise an existing ./certs is only read and new material stays in memory.
   */
  writesCertDirOnlyWhenGiven?: boolean;
  /**
   * The dev loop: a process on a laptop that a cluster calls. --host defaults to 0.0.0.0 (kind,
   * k3d and Docker Desktop dial the machine from containers).
   */
  servesClusterFromOutside?: boolean;
  /**
   * The process serves the author's handlers (dev, a program on the library): --policy-file
   * defaults to the policy with no rules, so the bundled example's rules are served only when asked for.
   */
  servesOwnHandlers?: boolean;
  /** Fresh options before the flags apply. */
  defaults(): O;
  /** Takes the positional arguments; returns the problems with them (none when they fit). */
  positionals(options: O, args: readonly string[]): string[];
}

/** A command spec whose options type does not matter to the caller (lists of commands). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommandSpec = CommandSpec<any>;

/** The server flags `spec` reads. */
export function readsServerFlag(spec: AnyCommandSpec, name: FlagName): boolean {
  return spec.serverFlags === 'all' || spec.serverFlags.includes(name);
}

/** For commands that take no positional arguments. */
export function noPositionals(args: readonly string[]): string[] {
  return args.length > 0 ? [`"${args.join(' ')}": unexpected arguments`] : [];
}
