import { DEFAULT_NAMESPACE_FLAG, OUTPUT_FLAG, toolDefaults, VERBOSE_FLAG, type ToolOptions } from '../config/tool-args.js';
import { defineCommand } from './command.js';

/** Manifests through the policy (and custom webhooks) as kube-apiserver would take them. */
export const evaluate = defineCommand<ToolOptions>({
  name: 'evaluate',
  summary: 'run manifests through the policy as kube-apiserver would; exit 1 when one would be denied',
  usage: ['kube-admission-server evaluate -f FILE|DIR|- [-f ...] [--old FILE] [--handlers MODULE] [-o text|json] [-v] [flags]'],
  description: [
    'Runs each manifest through the webhooks whose rules, selectors and matchConditions match, as',
    'kube-apiserver would (a CREATE, or an UPDATE against --old): mutating webhooks first, then the',
    'validating ones on the mutated object. Prints each webhook\'s decision, message, warnings, audit',
    'annotations and the patch as a diff. Exit codes: 0 nothing denied, 1 something would be denied,',
    '2 bad input (the message names the file and document).',
  ].join('\n'),
  flags: [
    { names: ['-f', '--filename'], value: 'FILE|DIR|-', description: 'manifests to evaluate (repeatable; a folder reads its YAML files, - reads stdin)', apply: (o, v) => void o.files.push(v) },
    { names: ['--old'], value: 'FILE', description: 'stored versions: a manifest with one here (same kind, namespace, name) is an UPDATE', apply: (o, v) => void o.oldFiles.push(v) },
    { names: ['--handlers'], value: 'MODULE', description: 'a compiled module exporting custom webhooks (`webhooks` or the default export; repeatable)', apply: (o, v) => void o.handlers.push(v) },
    DEFAULT_NAMESPACE_FLAG,
    OUTPUT_FLAG,
    VERBOSE_FLAG,
  ],
  serverFlags: ['policy-file', 'namespace'],
  answersForInstall: true,
  examples: [
    { command: 'kubectl kustomize overlays/prod | kube-admission-server evaluate -f -', comment: 'what each webhook would say about every object, patches as diffs' },
    { command: 'kube-admission-server evaluate -f app.yaml --handlers dist/my-webhooks.js --policy-file policy.yaml', comment: 'with custom TypeScript handlers, compiled' },
  ],
  defaults: () => toolDefaults('evaluate'),
  positionals: (options, args) => {
    options.files.push(...args);
    return options.files.length === 0 ? ['evaluate: give the manifests with -f FILE|DIR|- (repeatable)'] : [];
  },
  run: async ({ config, options, io }) => (await import('../tools/evaluate-command.js')).runEvaluate(config, options, io),
});
