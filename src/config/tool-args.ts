import { FLAGS } from './flags.js';
import { operationProblem, principalProblem, subresourceProblem, type RequestOperation } from './request-values.js';

/**
 * The sub-commands that try a policy without serving it (evaluate, test, audit) and their own
 * flags. Server flags (--policy-file, --kubeconfig, --namespace, --log-level) still apply and
 * are parsed by load-config; each tool's flags are taken out of the command line first.
 */

export type ToolCommand = 'evaluate' | 'test' | 'audit';
export const TOOL_COMMANDS: readonly ToolCommand[] = ['evaluate', 'test', 'audit'];
export type OutputFormat = 'text' | 'json';

export interface ToolOptions {
  command: ToolCommand;
  /** evaluate: manifests (files, folders, `-` for stdin). */
  files: string[];
  /** evaluate: stored versions; an object with one of these (same kind, namespace, name) is an UPDATE. */
  oldFiles: string[];
  /** test: the folder of test files. */
  testDir?: string;
  /** test: write a JUnit XML report here. */
  junitFile?: string;
  output: OutputFormat;
  /** Namespace of objects that name none (kubectl's default namespace). */
  defaultNamespace: string;
  /** evaluate: JavaScript modules exporting custom webhooks (`webhooks` or default export). */
  handlers: string[];
  /** Also show webhooks that were not called, and why. */
  verbose: boolean;
  /** audit: objects per list call. */
  pageSize: number;
  /** audit: print the ClusterRole the policy needs instead of auditing. */
  printClusterRole: boolean;
  /** evaluate: the request's operation (default CREATE, or UPDATE for objects with an --old version). */
  operation?: RequestOperation;
  /** evaluate: requests made with dryRun=All. */
  dryRun: boolean;
  /** evaluate: the requesting user and groups (default kubectl's cluster admin). */
  user?: string;
  groups: string[];
  /** evaluate: the subresource requested (status, ephemeralcontainers, resize, exec, attach, portforward, proxy). */
  subResource?: string;
}

interface ToolFlag {
  names: readonly string[];
  commands: readonly ToolCommand[];
  takesValue: boolean;
  apply(options: ToolOptions, value: string): string | undefined;
}

const TOOL_FLAGS: readonly ToolFlag[] = [
  { names: ['-f', '--filename'], commands: ['evaluate'], takesValue: true, apply: (o, v) => void o.files.push(v) },
  { names: ['--old'], commands: ['evaluate'], takesValue: true, apply: (o, v) => void o.oldFiles.push(v) },
  { names: ['--handlers'], commands: ['evaluate'], takesValue: true, apply: (o, v) => void o.handlers.push(v) },
  { names: ['--junit'], commands: ['test'], takesValue: true, apply: (o, v) => void (o.junitFile = v) },
  {
    names: ['-o', '--output'],
    commands: TOOL_COMMANDS,
    takesValue: true,
    apply: (o, v) => (v === 'text' || v === 'json' ? void (o.output = v) : `"${v}" is not an output format; use text or json`),
  },
  {
    names: ['--default-namespace'],
    commands: ['evaluate', 'test'],
    takesValue: true,
    apply: (o, v) => (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v) && v.length <= 63 ? void (o.defaultNamespace = v) : `"${v}" is not a namespace name`),
  },
  {
    names: ['--page-size'],
    commands: ['audit'],
    takesValue: true,
    apply: (o, v) => (/^[1-9][0-9]{0,4}$/.test(v) ? void (o.pageSize = Number(v)) : `"${v}" must be a whole number from 1 to 99999`),
  },
  {
    names: ['--operation'],
    commands: ['evaluate'],
    takesValue: true,
    apply: (o, v) => operationProblem(v) ?? void (o.operation = v as RequestOperation),
  },
  { names: ['--print-cluster-role'], commands: ['audit'], takesValue: false, apply: (o) => void (o.printClusterRole = true) },
  { names: ['--dry-run'], commands: ['evaluate'], takesValue: false, apply: (o) => void (o.dryRun = true) },
  { names: ['--user'], commands: ['evaluate'], takesValue: true, apply: (o, v) => principalProblem(v) ?? void (o.user = v) },
  { names: ['--group'], commands: ['evaluate'], takesValue: true, apply: (o, v) => principalProblem(v) ?? void o.groups.push(v) },
  { names: ['--subresource'], commands: ['evaluate'], takesValue: true, apply: (o, v) => subresourceProblem(v) ?? void (o.subResource = v) },
  { names: ['-v', '--verbose'], commands: TOOL_COMMANDS, takesValue: false, apply: (o) => void (o.verbose = true) },
];

export interface ParsedToolArgs {
  options: ToolOptions;
  /** Arguments left for the server flags. */
  rest: string[];
  problems: string[];
}

function flagFor(command: ToolCommand, token: string): { flag: ToolFlag; inline?: string } | undefined {
  const [name = '', ...value] = token.split('=');
  const flag = TOOL_FLAGS.find((f) => f.names.includes(name));
  if (!flag || !flag.commands.includes(command)) return undefined;
  return value.length > 0 ? { flag, inline: value.join('=') } : { flag };
}

/** A server flag written without `=VALUE` whose value is the next argument. */
function takesServerValue(token: string): boolean {
  if (token.includes('=')) return false;
  const name = token.replace(/^--?/, '');
  const flag = FLAGS.find((f) => f.name === name);
  return flag !== undefined && flag.kind !== 'boolean';
}

/** Takes `command`'s own flags and positionals out of `argv` (which starts after the command). */
export function parseToolArgs(command: ToolCommand, argv: readonly string[]): ParsedToolArgs {
  const options: ToolOptions = { command, files: [], oldFiles: [], output: 'text', defaultNamespace: 'default', handlers: [], verbose: false, pageSize: 500, printClusterRole: false, dryRun: false, groups: [] };
  const rest: string[] = [];
  const problems: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    const found = flagFor(command, token);
    if (!found) {
      if (token === '-' || !token.startsWith('-')) positionals.push(token);
      else rest.push(token, ...(takesServerValue(token) && argv[i + 1] !== undefined ? [argv[++i]!] : []));
      continue;
    }
    const name = token.split('=')[0];
    let value = found.inline ?? '';
    if (found.flag.takesValue && found.inline === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        problems.push(`${name}: needs a value`);
        continue;
      }
      value = argv[++i]!;
    }
    const problem = found.flag.apply(options, value);
    if (problem) problems.push(`${name}: ${problem}`);
  }
  if (command === 'test') {
    if (positionals.length !== 1) problems.push('test: give exactly one folder of test files: kube-admission-server test DIR');
    else options.testDir = positionals[0];
  } else if (command === 'evaluate') {
    options.files.push(...positionals);
    if (options.files.length === 0) problems.push('evaluate: give the manifests with -f FILE|DIR|- (repeatable)');
  } else if (positionals.length > 0) {
    problems.push(`"${positionals.join(' ')}": unexpected arguments`);
  }
  return { options, rest, problems };
}
