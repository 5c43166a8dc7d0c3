import { readsServerFlag, type AnyCommandSpec } from './command-spec.js';
import { FLAGS } from './flags.js';

/** The help texts: `help` (the commands), `<command> --help` (one command), and the server flags. */

const BINARY = 'kube-admission-server';
const COLUMN = 30;

function row(name: string, text: string): string {
  return name.length < COLUMN - 2 ? `  ${name.padEnd(COLUMN - 2)}${text}` : `  ${name}\n  ${''.padEnd(COLUMN - 2)}${text}`;
}

/** Every server flag `spec` reads (all of them without a spec), with its environment variable and default. */
export function renderServerFlags(spec?: AnyCommandSpec): string {
  return FLAGS.filter((flag) => !spec || readsServerFlag(spec, flag.name))
    .map((flag) => {
      const name = flag.kind === 'boolean' ? `--${flag.name}, --no-${flag.name}` : `--${flag.name}`;
      return `${row(name, flag.description)}\n  ${''.padEnd(COLUMN - 2)}env ${flag.env}; default: ${flag.defaultText}`;
    })
    .join('\n');
}

/** The server flags reference: every flag with its environment variable and default. */
export function renderHelp(): string {
  return `Flags (a flag wins over its environment variable):\n${renderServerFlags()}\n`;
}

/** `kube-admission-server help`: what the binary does and one line per command. */
export function renderCommandList(commands: readonly AnyCommandSpec[]): string {
  return [
    `Usage: ${BINARY} [command] [flags]`,
    '',
    'Serves Kubernetes admission webhooks over HTTPS, registers its own webhook configurations and',
    'tears them down on shutdown. With no cluster configured it runs locally and registers nothing.',
    '',
    'Commands:',
    ...commands.map((spec) => row(spec.name, spec.summary)),
    row('help [command]', 'list the commands, or show one command\'s usage, flags and examples'),
    '',
    `Run "${BINARY} <command> --help" for a command's usage, flags and examples; with no command, the`,
    'server runs ("serve"). Every flag also has an environment variable.',
    '',
  ].join('\n');
}

/** `kube-admission-server <command> --help`: usage, what it does, its flags, the server flags it reads, examples. */
export function renderCommandHelp(spec: AnyCommandSpec): string {
  const lines = [...spec.usage.map((usage, i) => `${i === 0 ? 'Usage: ' : '       '}${usage}`), '', spec.description, ''];
  if (spec.flags.length > 0) {
    lines.push('Flags:');
    for (const flag of spec.flags) lines.push(row(`${flag.names.join(', ')}${flag.value ? ` ${flag.value}` : ''}`, flag.description));
    lines.push('');
  }
  const serverFlags = renderServerFlags(spec);
  if (serverFlags !== '') lines.push(`${spec.flags.length > 0 ? 'Server flags it reads' : 'Flags'} (a flag wins over its environment variable):`, serverFlags, '');
  lines.push(row('--help, -h', 'print this help'), '');
  lines.push(spec.examples.length > 1 ? 'Examples:' : 'Example:');
  for (const example of spec.examples) lines.push(`  ${example.command}`, `      ${example.comment}`);
  lines.push('', `"${BINARY} help" lists the commands.`, '');
  return lines.join('\n');
}
