import { noPositionals } from '../config/command-spec.js';
import type { ImportOptions } from '../tools/vap-import/import-command.js';
import { defineCommand } from './command.js';

/** ValidatingAdmissionPolicies brought into a policy file, so they can be tried and served here. */
export const importPolicies = defineCommand<ImportOptions>({
  name: 'import',
  summary: 'turn ValidatingAdmissionPolicies and their bindings into policy-file entries',
  usage: ['kube-admission-server import -f FILE|DIR|- [-f ...] [--out FILE]'],
  description: [
    'Reads ValidatingAdmissionPolicies, their ValidatingAdmissionPolicyBindings and the params',
    'objects the bindings name (admissionregistration.k8s.io/v1 or v1beta1), and writes a policy file:',
    'one kind: cel entry per binding (per params object when a paramRef selector picks several), with',
    'the policy\'s and the binding\'s match rules and selectors combined, validationActions, variables,',
    'validations, auditAnnotations and matchConditions. What cannot be expressed is named on stderr',
    'with its object and field, never dropped silently. Exit codes: 0 all imported, 1 written with',
    'the problems listed, 2 bad input.',
  ].join('\n'),
  flags: [
    { names: ['-f', '--filename'], value: 'FILE|DIR|-', description: 'policies, bindings and params (repeatable; a folder is read whole; - reads stdin)', apply: (o, v) => void o.files.push(v) },
    { names: ['--out'], value: 'FILE', description: 'write the policy file here (default: stdout)', apply: (o, v) => void (o.outFile = v) },
  ],
  serverFlags: [],
  examples: [
    { command: 'kube-admission-server import -f vap.yaml -f binding.yaml -f params.yaml --out policy.yaml', comment: 'a policy, its binding and its params as a policy file' },
    { command: 'kubectl get validatingadmissionpolicies,validatingadmissionpolicybindings,configmaps -A -o yaml | kube-admission-server import -f -', comment: 'what a cluster runs' },
  ],
  defaults: () => ({ files: [] }),
  positionals: (options, args) => [...noPositionals(args), ...(options.files.length === 0 ? ['import: give the policies with -f FILE (repeatable)'] : [])],
  run: async ({ options, io }) => (await import('../tools/vap-import/import-command.js')).runImport(options, io),
});
