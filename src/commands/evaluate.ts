import { operationProblem, principalProblem, subresourceProblem, type RequestOperation } from '../config/request-values.js';
import { AUTHORIZER_ANSWER_FLAG, AUTHORIZER_ANSWERS_FLAG, DEFAULT_NAMESPACE_FLAG, HANDLERS_FLAG, OUTPUT_FLAG, toolDefaults, VERBOSE_FLAG, type ToolOptions } from '../config/tool-args.js';
import { defineCommand } from './command.js';

/** Manifests through the policy (and custom webhooks) as kube-apiserver would take them. */
export const evaluate = defineCommand<ToolOptions>({
  name: 'evaluate',
  summary: 'run manifests through the policy as kube-apiserver would; exit 1 when one would be denied',
  usage: [
    'kube-admission-server evaluate -f FILE|DIR|- [-f ...] [--old FILE] [--handlers MODULE] [-o text|json] [-v] [flags]',
    'kube-admission-server evaluate -f FILE [--operation CREATE|UPDATE|DELETE|CONNECT] [--dry-run] [--user NAME] [--group NAME] [--subresource NAME]',
  ],
  description: [
    'Runs each manifest through the webhooks whose rules, selectors and matchConditions match, as',
    'kube-apiserver would (a CREATE, or an UPDATE against --old; --operation and the other request',
    'flags give any other request): mutating webhooks first, then the validating ones on the mutated',
    'object. Prints each webhook\'s decision, message, warnings, audit',
    'annotations and the patch as a diff. Exit codes: 0 nothing denied, 1 something would be denied,',
    '2 bad input (the message names the file and document).',
  ].join('\n'),
  flags: [
    { names: ['-f', '--filename'], value: 'FILE|DIR|-', description: 'manifests to evaluate (repeatable; a folder reads its YAML files, - reads stdin)', apply: (o, v) => void o.files.push(v) },
    { names: ['--old'], value: 'FILE', description: 'stored versions: a manifest with one here (same kind, namespace, name) is an UPDATE', apply: (o, v) => void o.oldFiles.push(v) },
    HANDLERS_FLAG,
    {
      names: ['--operation'],
      value: 'CREATE|UPDATE|DELETE|CONNECT',
      description: 'the request\'s operation (default CREATE, or UPDATE for a manifest with an --old version; DELETE sends the manifest as oldObject)',
      apply: (o, v) => operationProblem(v) ?? void (o.operation = v as RequestOperation),
    },
    { names: ['--dry-run'], description: 'requests made with dryRun (kubectl --dry-run=server): request.dryRun is true', apply: (o) => void (o.dryRun = true) },
    { names: ['--user'], value: 'NAME', description: 'the requesting user (default kubectl\'s cluster admin, kubernetes-admin)', apply: (o, v) => principalProblem(v) ?? void (o.user = v) },
    { names: ['--group'], value: 'NAME', description: 'a group of the requesting user (repeatable; default system:masters, system:authenticated)', apply: (o, v) => principalProblem(v) ?? void o.groups.push(v) },
    { names: ['--subresource'], value: 'NAME', description: 'the subresource requested (status, ephemeralcontainers, resize, exec, attach, portforward, proxy, ...)', apply: (o, v) => subresourceProblem(v) ?? void (o.subResource = v) },
    DEFAULT_NAMESPACE_FLAG,
    AUTHORIZER_ANSWER_FLAG,
    AUTHORIZER_ANSWERS_FLAG,
    OUTPUT_FLAG,
    VERBOSE_FLAG,
  ],
  serverFlags: ['policy-file', 'namespace', 'kubernetes-version'],
  answersForInstall: true,
  examples: [
    { command: 'kubectl kustomize overlays/prod | kube-admission-server evaluate -f -', comment: 'what each webhook would say about every object, patches as diffs' },
    { command: 'kube-admission-server evaluate -f pod.yaml --operation CONNECT --subresource exec --user alice --group dev', comment: 'what a kubectl exec by alice would meet' },
    { command: 'kube-admission-server evaluate -f app.yaml --handlers dist/src/webhooks.js --policy-file policy.yaml', comment: 'with custom TypeScript handlers, compiled' },
  ],
  defaults: () => toolDefaults('evaluate'),
  positionals: (options, args) => {
    options.files.push(...args);
    return options.files.length === 0 ? ['evaluate: give the manifests with -f FILE|DIR|- (repeatable)'] : [];
  },
  run: async ({ config, options, io }) => (await import('../tools/evaluate-command.js')).runEvaluate(config, options, io),
});
