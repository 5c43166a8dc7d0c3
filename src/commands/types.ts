import { noPositionals } from '../config/command-spec.js';
import type { TypesOptions } from '../tools/types-command.js';
import { defineCommand } from './command.js';

/** TypeScript types from CRDs, for typed webhooks on custom resources. */
export const types = defineCommand<TypesOptions>({
  name: 'types',
  summary: 'write the TypeScript types of a CRD\'s objects, for typed webhooks',
  usage: ['kube-admission-server types --crd FILE|- [--crd ...] [--out FILE]'],
  description: [
    'Reads CustomResourceDefinitions (apiextensions.k8s.io/v1) and writes a TypeScript module: the',
    'type of the objects of each served version, from its openAPIV3Schema, and a defineKind for it,',
    'so that defineValidatingWebhook({ kind: widgetV1, ... }) types request.object and derives the',
    'rules. Other documents in the files are skipped. Exit codes: 0 written, 2 bad input (the message',
    'names the file and document).',
  ].join('\n'),
  flags: [
    { names: ['--crd'], value: 'FILE|-', description: 'a file holding CRDs (repeatable; - reads stdin)', apply: (o, v) => void o.crdFiles.push(v) },
    { names: ['--out'], value: 'FILE', description: 'write the module here (default: stdout)', apply: (o, v) => void (o.outFile = v) },
  ],
  serverFlags: [],
  examples: [{ command: 'kube-admission-server types --crd config/crd/widgets.yaml --out src/widget-types.ts', comment: 'the types of the Widget CRD, for typed handlers' }],
  defaults: () => ({ crdFiles: [] }),
  positionals: (options, args) => [...noPositionals(args), ...(options.crdFiles.length === 0 ? ['types: give the CRDs with --crd FILE (repeatable)'] : [])],
  run: async ({ options, io }) => (await import('../tools/types-command.js')).runTypes(options, io),
});
