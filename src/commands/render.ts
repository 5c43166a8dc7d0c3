import { noPositionals } from '../config/command-spec.js';
import { EXIT_FAILURE, EXIT_INVALID_CONFIG, EXIT_OK } from '../lifecycle/exit-codes.js';
import { defineCommand } from './command.js';
import { prewarmKeysFor } from './serve.js';

/** The two configurations the server would register, for review and GitOps. */
export const render = defineCommand({
  name: 'render',
  summary: 'print the two webhook configurations it would register (with caBundle), as YAML',
  usage: ['kube-admission-server render [flags]'],
  description: [
    'Prints the MutatingWebhookConfiguration and ValidatingWebhookConfiguration the server would',
    'register, caBundle included, as YAML on stdout (logs on stderr): for review and GitOps. It reads',
    'the same flags as the server, so the certificate material is the one the server would use.',
    'Exit codes: 0 printed, 1 failure, 2 invalid configuration or policy file.',
  ].join('\n'),
  flags: [],
  serverFlags: 'all',
  examples: [
    { command: 'kube-admission-server render --policy-file policy.yaml --namespace webhooks > configurations.yaml', comment: 'what a server with this policy in namespace webhooks registers' },
  ],
  defaults: () => undefined,
  positionals: (_options, args) => noPositionals(args),
  run: async ({ config, io, startProcess }) => {
    prewarmKeysFor(config);
    const [{ renderConfigurations }, { PolicyFileError }, { logger, stopSignal }] = await Promise.all([
      import('../lifecycle/render.js'),
      import('../lifecycle/policy-reloader.js'),
      startProcess('stderr'),
    ]);
    try {
      io.stdout(await renderConfigurations(config, logger, stopSignal));
      return EXIT_OK;
    } catch (error) {
      if (error instanceof PolicyFileError) {
        io.stderr(`kube-admission-server: ${error.message}\n`);
        return EXIT_INVALID_CONFIG;
      }
      logger.error({ error: error instanceof Error ? error.message : String(error) }, 'render failed');
      return EXIT_FAILURE;
    }
  },
});
