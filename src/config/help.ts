import { FLAGS } from './flags.js';

/** The --help text: usage, then every flag with its environment variable and default. */
export function renderHelp(): string {
  const rows = FLAGS.map((flag) => {
    const name = flag.kind === 'boolean' ? `--${flag.name}, --no-${flag.name}` : `--${flag.name}`;
    return `  ${name.padEnd(28)} ${flag.description}\n  ${''.padEnd(28)} env ${flag.env}; default: ${flag.defaultText}`;
  });
  return [
    'Usage: kube-admission-server [render] [flags]',
    '',
    'Serves Kubernetes admission webhooks over HTTPS, registers its own webhook configurations and',
    'tears them down on shutdown. With no cluster configured it runs locally and registers nothing.',
    '',
    'Commands:',
    '  (none)                       serve',
    '  render                       print the two webhook configurations it would register, as YAML',
    '',
    'Flags (a flag wins over its environment variable):',
    ...rows,
    '  --help                       print this help',
    '',
    'Exit codes: 0 clean shutdown, 1 failure (startup or shutdown), 2 invalid configuration.',
    '',
  ].join('\n');
}
