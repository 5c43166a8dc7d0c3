import { FLAGS } from './flags.js';

/** The --help text: usage, then every flag with its environment variable and default. */
export function renderHelp(): string {
  const rows = FLAGS.map((flag) => {
    const name = flag.kind === 'boolean' ? `--${flag.name}, --no-${flag.name}` : `--${flag.name}`;
    return `  ${name.padEnd(28)} ${flag.description}\n  ${''.padEnd(28)} env ${flag.env}; default: ${flag.defaultText}`;
  });
  return [
    'Usage: kube-admission-server [render] [flags]',
    '       kube-admission-server evaluate -f FILE|DIR|- [--old FILE] [-o text|json] [--handlers MODULE] [flags]',
    '       kube-admission-server test DIR [--junit FILE] [-o text|json] [flags]',
    '       kube-admission-server audit [--page-size N] [--print-cluster-role] [-o text|json] [flags]',
    '',
    'Serves Kubernetes admission webhooks over HTTPS, registers its own webhook configurations and',
    'tears them down on shutdown. With no cluster configured it runs locally and registers nothing.',
    '',
    'Commands:',
    '  (none)                       serve',
    '  render                       print the two webhook configurations it would register, as YAML',
    '  evaluate                     run manifests through the policy as kube-apiserver would (CREATE, or UPDATE',
    '                               against --old); prints each webhook\'s decision and the patch as a diff;',
    '                               --default-namespace NAME, -v shows webhooks not called; exit 1 when denied;',
    '                               the request: --operation CREATE|UPDATE|DELETE|CONNECT, --dry-run, --user NAME,',
    '                               --group NAME (repeatable), --subresource NAME (status, exec, ...)',
    '  test DIR                     run the declarative tests in DIR; a pass/fail table; exit 1 on a mismatch',
    '  audit                        list what a cluster runs (--kubeconfig, read only) and report per namespace',
    '                               what the policy would deny, warn about or audit; every kind its rules match',
    '                               (API discovery); --print-cluster-role prints the read-only ClusterRole it needs',
    '',
    'Flags (a flag wins over its environment variable):',
    ...rows,
    '  --help                       print this help',
    '',
    'Exit codes: 0 clean shutdown, 1 failure (startup or shutdown), 2 invalid configuration.',
    'evaluate, test, audit: 0 nothing denied / all tests pass, 1 something would be denied / a test fails,',
    '2 bad input (the message names the file and document).',
    '',
  ].join('\n');
}
