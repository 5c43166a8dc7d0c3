import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { parsePolicy } from '../policy/policy-file.js';
import type { Policy, PolicyOptions } from '../policy/policy.js';
import type { AuthorizationSource } from '../cel/authorization-answers.js';
import type { Webhook } from '../admission/types.js';
import type { KubernetesVersion } from '../util/kubernetes-version.js';
import { snapshotOf, watchFiles, type FileSnapshot, type FileWatch } from '../util/watch-files.js';
import type { ServedHandlers } from './served-handlers.js';
import { servedPolicyWebhooks } from '../policy/engine.js';
import { entryDefinitions } from '../policy/entry-definition.js';
import { PolicyFileError } from '../policy/policy-file.js';

export interface LoadedPolicy {
  policy: Policy;
  webhooks: Webhook[];
  /**
   * Digest (watch-files' snapshot digest) of exactly the bytes that were parsed: the watcher
   * compares against it, so an edit that lands after the read is a change, however late the
   * watcher starts.
   */
  digest: string;
  /**
   * When the file was written (its modification time, read right after its bytes): where kubelet
   * updates the volume, when this node got this version. Registration records it to order policies.
   */
  modifiedAt: Date;
}

/** Reads the policy file once and parses those bytes; throws one Error whose message lists every problem with its line. */
export async function loadPolicyOrThrow(path: string, options: PolicyOptions): Promise<LoadedPolicy> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new PolicyFileError([`${path}: cannot read the policy file: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return parsePolicySnapshot(snapshotOf(new Map([[basename(path), bytes]])), path, options, await modifiedAt(path));
}

/** The file's modification time; now when it cannot be read (it was replaced meanwhile: the watcher sees that). */
async function modifiedAt(path: string): Promise<Date> {
  return await stat(path).then(
    (stats) => stats.mtime,
    () => new Date(),
  );
}

/** Parses the policy bytes of a snapshot of its directory (what the watcher saw), keeping its digest. */
function parsePolicySnapshot(snapshot: FileSnapshot, path: string, options: PolicyOptions, modified: Date): LoadedPolicy {
  const bytes = snapshot.contents.get(basename(path));
  if (bytes === undefined) throw new PolicyFileError([`${path}: cannot read the policy file: it is absent or unreadable`]);
  const result = parsePolicy(bytes.toString('utf8'), path, options);
  if (!result.ok) throw new PolicyFileError(result.errors);
  return { policy: result.policy, webhooks: result.webhooks, digest: snapshot.digest, modifiedAt: modified };
}


function reloadCounters(registry: Registry) {
  const existing = (name: string) => registry.getSingleMetric(name) as Counter | undefined;
  return {
    reloads:
      existing('kube_admission_policy_reloads_total') ??
      new Counter({ name: 'kube_admission_policy_reloads_total', help: 'Policy file versions applied after start', registers: [registry] }),
    errors:
      existing('kube_admission_policy_reload_errors_total') ??
      new Counter({ name: 'kube_admission_policy_reload_errors_total', help: 'Policy file versions rejected (the previous one stayed)', registers: [registry] }),
  };
}

export interface PolicyReloaderOptions {
  path: string;
  ownNamespace: string;
  /** Serves a new version's handlers (next to the previous ones until they are no longer routed). */
  handlers: Pick<ServedHandlers, 'replace'>;
  pollIntervalMs: number;
  logger: Logger;
  metricsRegistry: Registry;
  /** After a new version's handlers are served (the leader then re-registers). */
  onApplied: (loaded: LoadedPolicy) => void;
  /** Who answers authorizer checks (PolicyOptions.authorization). */
  authorization?: AuthorizationSource;
  /** Refuses a loaded version (throwing PolicyFileError) that this server cannot serve. */
  accept?: (loaded: LoadedPolicy, signal: AbortSignal) => Promise<void>;
}

/**
 * Watches the policy file (a ConfigMap volume changes the way a Secret volume does) and applies
 * each valid new version to the served handlers; an invalid one keeps the old, is logged with
 * every problem and counted.
 */
export class PolicyReloader {
  readonly #options: PolicyReloaderOptions;
  #current: LoadedPolicy;
  #watch: FileWatch | undefined;
  #kubernetesVersion: KubernetesVersion | undefined;

  constructor(options: PolicyReloaderOptions, initial: LoadedPolicy, kubernetesVersion?: KubernetesVersion) {
    this.#options = options;
    this.#current = initial;
    this.#kubernetesVersion = kubernetesVersion;
  }

  /** From now on each version is compiled for this kube-apiserver (read from the cluster at start). */
  compileFor(version: KubernetesVersion): void {
    this.#kubernetesVersion = version;
  }

  get current(): LoadedPolicy {
    return this.#current;
  }

  #policyOptions(): PolicyOptions {
    const { ownNamespace, authorization } = this.#options;
    const version = this.#kubernetesVersion;
    return { ownNamespace, ...(version ? { kubernetesVersion: version } : {}), ...(authorization ? { authorization } : {}) };
  }

  start(signal: AbortSignal): void {
    const { path, pollIntervalMs, logger } = this.#options;
    const counters = reloadCounters(this.#options.metricsRegistry);
    this.#watch = watchFiles({
      dir: dirname(path),
      files: [basename(path)],
      pollIntervalMs,
      signal,
      baselineDigest: this.#current.digest,
      onChange: async (snapshot) => {
        try {
          const loaded = parsePolicySnapshot(snapshot, path, this.#policyOptions(), await modifiedAt(path));
          await this.#options.accept?.(loaded, signal);
          // engine: native entries are kube-apiserver's alone: no route serves them.
          this.#options.handlers.replace(servedPolicyWebhooks(loaded.policy, loaded.webhooks), loaded.policy.grouping, entryDefinitions(loaded.policy.entries));
          this.#current = loaded;
          counters.reloads.inc();
          logger.info({ path, webhooks: loaded.webhooks.map((w) => w.name) }, 'policy reloaded');
          this.#options.onApplied(loaded);
        } catch (error) {
          counters.errors.inc();
          const problems = error instanceof PolicyFileError ? error.problems : [String(error)];
          logger.error({ path, problems }, 'new policy version rejected; keeping the previous one');
        }
      },
      onError: (error) => logger.warn({ path, error: String(error) }, 'policy watch problem'),
    });
  }

  async stopped(): Promise<void> {
    await this.#watch?.closed;
  }
}
