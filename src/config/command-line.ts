import { parseArgs } from 'node:util';
import { readsServerFlag, type AnyCommandSpec } from './command-spec.js';
import { FLAGS, type FlagName } from './flags.js';
import { renderCommandHelp, renderCommandList } from './help.js';
import { didYouMean, nearest } from './suggest.js';

/**
 * The command line split into the command, its own options and the server flags it reads:
 * `kube-admission-server [command] [flags]`, where the command is the first word that is neither
 * a flag nor a flag's value (none: `serve`), `help [command]` and `--help` show help, and an
 * unknown command or flag is refused with the nearest known one.
 */

export const BINARY = 'kube-admission-server';
export const DEFAULT_COMMAND = 'serve';

export type CommandLine =
  | { kind: 'help'; text: string }
  | { kind: 'invalid'; problems: string[] }
  | {
      kind: 'command';
      spec: AnyCommandSpec;
      options: unknown;
      /** Server flag values given on the command line (strings, or booleans for switches). */
      flagValues: ReadonlyMap<FlagName, string | boolean>;
      problems: string[];
    };

const SERVER_FLAG_TAKES_VALUE = new Map(FLAGS.map((flag) => [flag.name as string, flag.kind !== 'boolean']));

const SERVER_FLAG_NAMES = FLAGS.map((flag) => `--${flag.name}`);

/**
 * Whether `token` (a flag written without `=`) takes the next argument as its value. A misspelt
 * flag is taken as the flag it was most likely meant to be, so that its value is not read as a
 * command or a positional: `--polcy-file p.yaml` is one unknown flag, not also a command "p.yaml".
 */
function takesValue(token: string, commands: readonly AnyCommandSpec[]): boolean {
  if (token.includes('=')) return false;
  const own = (name: string): boolean => commands.some((spec) => spec.flags.some((flag) => flag.value !== undefined && flag.names.includes(name)));
  const server = (name: string): boolean => SERVER_FLAG_TAKES_VALUE.get(name.replace(/^--?/, '')) === true;
  if (server(token) || own(token)) return true;
  const known = SERVER_FLAG_NAMES.includes(token) || commands.some((spec) => spec.flags.some((flag) => flag.names.includes(token)));
  if (known || !token.startsWith('--')) return false;
  const [meant] = nearest(token, [...SERVER_FLAG_NAMES, ...commands.flatMap((spec) => spec.flags.flatMap((flag) => flag.names))]);
  return meant !== undefined && (server(meant) || own(meant));
}

/** Index of the command word in `argv`, or -1 when there is none. */
function commandIndex(argv: readonly string[], commands: readonly AnyCommandSpec[]): number {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') return -1;
    if (!token.startsWith('-') || token === '-') return i;
    if (takesValue(token, commands)) i++;
  }
  return -1;
}

function byName(commands: readonly AnyCommandSpec[], name: string): AnyCommandSpec | undefined {
  return commands.find((spec) => spec.name === name);
}

function unknownCommand(word: string, commands: readonly AnyCommandSpec[]): string {
  const names = commands.map((spec) => spec.name);
  return `"${word}": unknown command${didYouMean(word, names, '"')} (${BINARY} help lists the commands)`;
}

/** Takes the command's own flags and positionals out of `args`; the rest is left for the server flags. */
function ownArguments(spec: AnyCommandSpec, args: readonly string[]) {
  const options: unknown = spec.defaults();
  const rest: string[] = [];
  const positionals: string[] = [];
  const problems: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i] as string;
    const [name = '', ...inline] = token.split('=');
    const flag = token.startsWith('-') && token !== '-' ? spec.flags.find((f) => f.names.includes(name)) : undefined;
    if (!flag) {
      if (token === '-' || !token.startsWith('-')) positionals.push(token);
      else rest.push(token, ...(takesValue(token, [spec]) && args[i + 1] !== undefined ? [args[++i] as string] : []));
      continue;
    }
    let value = inline.join('=');
    if (flag.value !== undefined && inline.length === 0) {
      const next = args[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        problems.push(`${name}: needs a value (${flag.value})`);
        continue;
      }
      value = args[++i] as string;
    }
    const problem = flag.apply(options, value);
    if (problem) problems.push(`${name}: ${problem}`);
  }
  problems.push(...spec.positionals(options, positionals));
  return { options, rest, problems };
}

/** The server flags among `rest`, with a problem for each unknown, unread or value-less one. */
function serverFlags(spec: AnyCommandSpec, rest: readonly string[]) {
  const known: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const flag of FLAGS) known[flag.name] = { type: flag.kind === 'boolean' ? 'boolean' : 'string' };
  const parsed = parseArgs({ args: [...rest], options: known, strict: false, allowPositionals: true, allowNegative: true, tokens: true });
  const candidates = [
    ...spec.flags.flatMap((flag) => flag.names.filter((n) => n.startsWith('--'))),
    ...FLAGS.filter((flag) => readsServerFlag(spec, flag.name)).flatMap((flag) => (flag.kind === 'boolean' ? [`--${flag.name}`, `--no-${flag.name}`] : [`--${flag.name}`])),
    '--help',
  ];
  const problems: string[] = [];
  const values = new Map<FlagName, string | boolean>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue;
    const flag = FLAGS.find((f) => f.name === token.name || (f.kind === 'boolean' && `no-${f.name}` === token.name));
    if (!flag) {
      problems.push(`${token.rawName}: unknown flag${didYouMean(token.rawName, candidates)} (${helpCommand(spec)} lists the flags)`);
    } else if (!readsServerFlag(spec, flag.name)) {
      problems.push(`${token.rawName}: not a flag of ${spec.name}${didYouMean(token.rawName, candidates)} (${helpCommand(spec)} lists the flags)`);
    } else if (flag.kind !== 'boolean' && token.value === undefined) {
      problems.push(`${token.rawName}: needs a value, e.g. ${token.rawName}=VALUE`);
    } else {
      values.set(flag.name, flag.kind === 'boolean' ? !token.rawName.startsWith('--no-') : (token.value as string));
    }
  }
  return { values, problems };
}

function helpCommand(spec: AnyCommandSpec): string {
  return spec.name === DEFAULT_COMMAND ? `${BINARY} --help` : `${BINARY} ${spec.name} --help`;
}

/** Reads `argv` against `commands` (which must include `serve`, the command of a bare command line). */
export function parseCommandLine(argv: readonly string[], commands: readonly AnyCommandSpec[]): CommandLine {
  const at = commandIndex(argv, commands);
  const word = at < 0 ? undefined : (argv[at] as string);
  const args = at < 0 ? [...argv] : [...argv.slice(0, at), ...argv.slice(at + 1)];
  const wantsHelp = args.some((arg) => arg === '--help' || arg === '-h');

  if (word === 'help') {
    const topic = args.find((arg) => !arg.startsWith('-'));
    if (topic === undefined) return { kind: 'help', text: renderCommandList(commands) };
    const spec = byName(commands, topic);
    return spec ? { kind: 'help', text: renderCommandHelp(spec) } : { kind: 'invalid', problems: [unknownCommand(topic, commands)] };
  }
  const named = byName(commands, word ?? DEFAULT_COMMAND);
  const spec = named ?? byName(commands, DEFAULT_COMMAND);
  if (!spec) throw new Error(`the command list has no "${DEFAULT_COMMAND}" command`);
  const unknown = named ? [] : [unknownCommand(word as string, commands)];
  if (wantsHelp) return unknown.length > 0 ? { kind: 'invalid', problems: unknown } : { kind: 'help', text: renderCommandHelp(spec) };

  // An unknown command is reported with every other problem of the line, read as a bare one.
  const own = ownArguments(spec, args);
  const server = serverFlags(spec, own.rest);
  return { kind: 'command', spec, options: own.options, flagValues: server.values, problems: [...unknown, ...own.problems, ...server.problems] };
}
