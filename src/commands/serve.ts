import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { noPositionals } from '../config/command-spec.js';
import type { Config } from '../config/types.js';
import { prewarmRsaKeys } from '../tls/keys.js';
import { defineCommand } from './command.js';

/**
 * A first start in generate mode needs a CA key and a leaf key: generate them on the thread pool
 * while the rest of the server loads. Not when local material is already there to reuse.
 */
export function prewarmKeysFor(config: Config): void {
  const localMaterial = !config.clusterConfigured && existsSync(join(config.certDir, 'tls.key'));
  if (config.tlsMode === 'generate' && !localMaterial) prewarmRsaKeys(2);
}

/** The server itself: what the binary does with no command. */
export const serve = defineCommand({
  name: 'serve',
  summary: 'serve the policy\'s webhooks, register them, tear them down on shutdown (the default)',
  usage: ['kube-admission-server [serve] [flags]'],
  description: [
    'Serves the policy file\'s webhooks over HTTPS, self-checks its TLS as kube-apiserver will see it,',
    'registers its webhook configurations (the leader, in a cluster), follows certificate and policy',
    'changes, and on SIGTERM tears its registrations down within the shutdown deadline. With no',
    'cluster configured (no --kubeconfig, not in a pod) it generates its CA into --cert-dir, serves',
    'and registers nothing. Exit codes: 0 clean shutdown, 1 failure, 2 invalid configuration.',
  ].join('\n'),
  flags: [],
  serverFlags: 'all',
  examples: [
    { command: 'kube-admission-server', comment: 'locally: a CA in ./certs, https://127.0.0.1:8443, nothing registered' },
    { command: 'kube-admission-server --kubeconfig ~/.kube/config --namespace webhooks --policy-file policy.yaml', comment: 'against a cluster from outside it (it deletes its registrations when it stops)' },
  ],
  defaults: () => undefined,
  positionals: (_options, args) => noPositionals(args),
  run: async ({ config, startProcess }) => {
    // Not in a cluster: there the material is in the Secret on every start but an install's first
    // (or one after the Secret was deleted), and two RSA keys made for nothing cost a restart about
    // 100 ms of CPU, beside the imports and on the pod's CPU limit. When the
    // Secret has none, renewMaterial generates both keys side by side on the thread pool then.
    if (!config.clusterConfigured) prewarmKeysFor(config);
    const [{ runServer }, services] = await Promise.all([import('../lifecycle/run-server.js'), startProcess('stdout')]);
    return await runServer(config, services);
  },
});
