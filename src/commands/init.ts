import type { InitOptions } from '../tools/init-project.js';
import { defineCommand } from './command.js';

/** A new project of typed handlers: the way a TypeScript team starts. */
export const init = defineCommand<InitOptions>({
  name: 'init',
  summary: 'write a new project of typed TypeScript webhooks, with tests, Dockerfile, kustomize and Helm values',
  usage: ['kube-admission-server init DIR [--name NAME] [--tarball FILE]'],
  description: [
    'Writes a project into DIR (new, or empty): package.json depending on this package at this',
    'version, tsconfig.json, src/webhooks.ts with a typed validating and a typed mutating handler,',
    'their node:test tests, src/main.ts serving them, a Dockerfile FROM this version\'s image, a',
    'kustomize overlay and Helm values for your image, and a README with the five commands (test,',
    'dev, image, render, deploy). A folder with anything in it but .git is refused: nothing of yours',
    'is overwritten. With --tarball, the project depends on that tarball of this version (copied into',
    'DIR, which its Dockerfile builds with) instead of the registry\'s: `npm run init -- DIR` in a clone',
    'of the repository packs it and runs this. Exit codes: 0 written, 2 bad input.',
  ].join('\n'),
  flags: [
    { names: ['--name'], value: 'NAME', description: 'the npm package, image and Helm release name (default: the folder\'s name)', apply: (o, v) => void (o.name = v) },
    {
      names: ['--tarball'],
      value: 'FILE',
      description: 'depend on this package tarball (`npm pack` of this version) instead of the registry\'s version; copied into the project',
      apply: (o, v) => void (o.tarball = v),
    },
  ],
  serverFlags: [],
  examples: [
    { command: 'npx kube-admission-server@latest init my-webhooks', comment: 'a new project in ./my-webhooks; then cd my-webhooks && npm install && npm test' },
    { command: 'kube-admission-server init my-webhooks --tarball kube-admission-server-0.1.0.tgz', comment: 'depend on a packed tarball; in a clone, `npm run init -- DIR` packs it and runs this' },
  ],
  defaults: () => ({}),
  positionals: (options, args) => {
    if (args.length === 0) return ['init: give the folder to create (kube-admission-server init my-webhooks)'];
    if (args.length > 1) return [`init: one folder, not ${args.length} (${args.join(' ')})`];
    options.target = args[0]!;
    return [];
  },
  run: async ({ options, io }) => (await import('../tools/init-project.js')).runInit(options, io),
});
