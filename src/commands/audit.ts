import { noPositionals } from '../config/command-spec.js';
import { AUDIT_OUTPUT_FLAG, toolDefaults, VERBOSE_FLAG, type ToolOptions } from '../config/tool-args.js';
import { defineCommand } from './command.js';

/** What a cluster already runs, through the policy, read only. */
export const audit = defineCommand<ToolOptions>({
  name: 'audit',
  summary: 'report what a cluster already runs that the policy would deny, warn about or audit',
  usage: ['kube-admission-server audit --kubeconfig FILE [--page-size N] [--print-cluster-role] [-o text|json|report] [-v] [flags]'],
  description: [
    'Finds every kind the policy\'s rules match (API discovery), lists each (read only, paged, one page',
    'in memory at a time) in the cluster --kubeconfig names and reports, per namespace, what the policy',
    'would deny, warn about or audit. Its RBAC: manifests/audit/clusterrole.yaml for the bundled',
    'policies, or what --print-cluster-role prints for this one. A progress line goes to stderr on',
    'runs longer than a few seconds. With -o report it prints, as YAML, the report objects the',
    'server\'s background audit would write for the same objects (the same evaluation and the same',
    'objects: --config-name, --reports-api, --reports-max-bytes and --owner-cluster-role as the server',
    'is given them; it lists only what the reported rules match). Exit codes: 0 nothing would be',
    'denied, 1 something would, 2 bad input or a cluster that cannot be read.',
  ].join('\n'),
  flags: [
    {
      names: ['--page-size'],
      value: 'N',
      description: 'objects per list call (default 500)',
      apply: (o, v) => (/^[1-9][0-9]{0,4}$/.test(v) ? void (o.pageSize = Number(v)) : `"${v}" must be a whole number from 1 to 99999`),
    },
    { names: ['--print-cluster-role'], description: 'print the read-only ClusterRole this policy\'s audit needs, as YAML, and audit nothing', apply: (o) => void (o.printClusterRole = true) },
    AUDIT_OUTPUT_FLAG,
    VERBOSE_FLAG,
  ],
  serverFlags: ['policy-file', 'namespace', 'kubeconfig', 'config-name', 'owner-cluster-role', 'reports-api', 'reports-max-bytes'],
  answersForInstall: true,
  examples: [
    { command: 'kube-admission-server audit --kubeconfig ~/.kube/config --policy-file policy.yaml', comment: 'what already runs and would be refused once the policy enforces' },
    { command: 'kube-admission-server audit --kubeconfig ~/.kube/config --policy-file policy.yaml --print-cluster-role | kubectl apply -f -', comment: 'the ClusterRole the audit of this policy reads with' },
    { command: 'kube-admission-server audit --kubeconfig ~/.kube/config --policy-file policy.yaml -o report > reports.yaml', comment: 'the Report objects the server would write, for CI to compare with the cluster\'s' },
  ],
  defaults: () => toolDefaults('audit'),
  positionals: (_options, args) => noPositionals(args),
  run: async ({ config, options, io }) => (await import('../tools/audit-command.js')).runAudit(config, options, io),
});
