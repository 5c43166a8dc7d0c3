import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/types.js';
import type { Webhook } from '../admission/types.js';
import type { PolicyReloader } from './policy-reloader.js';

/** The leader's background audit as the server runs it, and what shutdown closes. */
export interface ServedAudit {
  /** For the registration's leadership: one term. */
  runTerm(signal: AbortSignal): Promise<void>;
  policyChanged(): void;
  /** Ends its kept-alive connections (after the last term stopped). */
  close(): void;
}

export interface ServedAuditInputs {
  config: Config;
  policy: PolicyReloader;
  /** The custom webhooks served now (the dev loop replaces them). */
  customWebhooks: () => readonly Webhook[];
  registry: Registry;
  logger: Logger;
}

/**
 * The background audit (src/reports/) wired to the server: the policy in force with the custom
 * handlers after it, the server's handler run, connections of its own, and the report settings
 * of the flags. Undefined with `--reports off`; loaded only when on.
 */
export async function servedAudit(inputs: ServedAuditInputs): Promise<ServedAudit | undefined> {
  const { config, policy } = inputs;
  if (config.reports === 'off') return undefined;
  const [{ BackgroundAudit }, { REPORT_APIS }, { loadKubeConfig }, { runAsCalled }] = await Promise.all([
    import('../reports/background-audit.js'),
    import('../reports/report-api.js'),
    import('../kube/client.js'),
    import('../server/run-as-called.js'),
  ]);
  // Its own connection pool: the audit's lists, watches and writes never queue the leader's other calls.
  const kubeConfig = loadKubeConfig(config);
  const audit = new BackgroundAudit({
    kubeConfig,
    mode: config.reports,
    api: REPORT_APIS[config.reportsApi],
    install: config.configName,
    maxBytes: config.reportsMaxBytes,
    events: config.reportsEvents,
    instance: config.podName,
    ownerClusterRole: config.ownerClusterRole,
    policy: () => {
      const { policy: file, webhooks } = policy.current;
      return { entries: file.entries, webhooks: [...webhooks, ...inputs.customWebhooks()], excludedNamespaces: [...new Set([config.namespace, ...file.excludedNamespaces])] };
    },
    run: runAsCalled,
    registry: inputs.registry,
    logger: inputs.logger.child({ component: 'background-audit' }),
  });
  return {
    runTerm: (signal) => audit.runTerm(signal),
    policyChanged: () => audit.policyChanged(),
    close: () => kubeConfig.close(),
  };
}
