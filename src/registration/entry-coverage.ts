import type { Logger } from 'pino';
import { formatApiFailure, isForbidden } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { listReadyReplicas, probeReplicaEntries, type ReplicaEntries } from './replica-entries.js';
import type { ServiceRef } from './service-endpoints.js';
import type { WebhookType } from '../admission/types.js';
import { SERVED_ENTRIES_PATH } from '../server/served-entries-route.js';
import { deadlineSignal, sleep } from '../util/abort.js';

/**
 * How long a leader holds a new or renamed entry back for a ready replica that does not serve it
 * yet. kubelet rewrites a ConfigMap volume at each pod's next sync, up to a minute or two after
 * the change and at a different moment on each node; past the bound the leader registers anyway
 * (logged, counted): a replica that never gets the entry (a bad volume, an old image) must not
 * stop every later registration.
 */
export const ENTRY_COVERAGE_WAIT_MS = 90_000;
/** Between looks at the replicas while one lacks an entry. */
const RECHECK_MS = 1000;
/** One replica's answer; a replica that takes longer is asked again at the next look. */
const PROBE_TIMEOUT_MS = 2000;

export interface EntryRef {
  type: WebhookType;
  name: string;
}

export interface EntryCoverageOptions {
  api: KubeApi;
  service: ServiceRef;
  /** The Service port's name on the endpoints (the webhook port). */
  portName: string;
  /** `<service>.<namespace>.svc`. */
  serverName: string;
  caBundlePem: () => string;
  /** The entries the next registration routes to. */
  entries: () => readonly EntryRef[];
  onTimedOut?: () => void;
  logger: Logger;
  timeoutMs?: number;
}

interface Lacking {
  replica: string;
  entries: string[];
}

/** The set of entries as one comparable string. */
function entriesKey(entries: readonly EntryRef[]): string {
  return JSON.stringify(entries.map((entry) => `${entry.type}/${entry.name}`).sort());
}

function lackingOf(results: readonly ReplicaEntries[], wanted: readonly EntryRef[]): Lacking[] {
  const lacking: Lacking[] = [];
  for (const result of results) {
    // A replica that cannot say (unreachable, an older version without the endpoint) does not hold the registration back.
    if (!('entries' in result)) continue;
    const served = { validating: new Set(result.entries.validating), mutating: new Set(result.entries.mutating) };
    const missing = wanted.filter((entry) => !served[entry.type].has(entry.name)).map((entry) => `${entry.type}/${entry.name}`);
    if (missing.length > 0) lacking.push({ replica: `${result.replica.address}:${result.replica.port}`, entries: missing });
  }
  return lacking;
}

/**
 * Keeps a registration that routes to a new entry (a rule added or renamed) back until every
 * ready replica of the Service serves it. A replica whose policy volume lags answers a call naming
 * an entry it does not know with 503 "retry on another replica"; kube-apiserver retries such an
 * answer on the same Service, where, when no ready replica has the entry (a new leader that is
 * not Ready yet registered it), every retry fails and failurePolicy Fail refuses the user's write.
 * So the leader asks each ready endpoint (GET /served-entries on the webhook port, TLS verified
 * with the caBundle, as kube-apiserver verifies it) and registers once none lacks an entry, or
 * when the bound passes. An entry set once settled is not waited for again.
 *
 * A leader's first registration waits before it is Ready (readiness means registered): a new pod
 * whose policy already renamed a rule does not know the old name, and, Ready, would answer calls
 * still routed to the old name as "not served" while it waits; the replicas behind serve it.
 */
export class EntryCoverage {
  readonly #options: EntryCoverageOptions;
  #settled: string | undefined;

  constructor(options: EntryCoverageOptions) {
    this.#options = options;
  }

  /**
   * Resolves when the registration may go ahead; rejects only when `signal` aborts. The entries
   * are read again at every look: a policy reloaded during the wait (this replica's own volume
   * catching up with a rename the others already serve) changes what the registration routes to,
   * and a wait for the entries it replaced would hold the registration to the bound for nothing.
   */
  async beforeRegistering(signal: AbortSignal): Promise<void> {
    let key = entriesKey(this.#options.entries());
    if (key === this.#settled) return;
    const { logger, service } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? ENTRY_COVERAGE_WAIT_MS;
    const started = performance.now();
    const waitedMs = (): number => Math.round(performance.now() - started);
    const deadline = deadlineSignal(timeoutMs, signal);
    let lacking: Lacking[] = [];
    for (let look = 0; ; look++) {
      const wanted = [...this.#options.entries()];
      key = entriesKey(wanted);
      const outcome = await this.#look(wanted, deadline);
      if (signal.aborted) throw signal.reason;
      if (outcome === 'unreadable') break;
      if (outcome !== 'no-answer') {
        lacking = outcome;
        if (lacking.length === 0) {
          if (look > 0) logger.info({ service: service.name, waitedMs: waitedMs() }, 'every ready replica serves the new entries; registering them');
          break;
        }
        if (look === 0) {
          logger.info({ service: service.name, lacking, boundMs: timeoutMs }, 'a new entry is to be registered: waiting until every ready replica serves it (their policy volumes update apart)');
        }
      }
      try {
        await sleep(RECHECK_MS, deadline);
      } catch {
        if (signal.aborted) throw signal.reason;
        this.#options.onTimedOut?.();
        logger.warn(
          { service: service.name, waitedMs: waitedMs(), lacking },
          'ready replicas still do not serve a new entry within the bound; registering it anyway: calls they get for it are answered 503 until their policy volumes catch up',
        );
        break;
      }
    }
    this.#settled = key;
  }

  /** Which ready replicas lack which entries; 'no-answer' when the endpoints could not be listed now. */
  async #look(wanted: readonly EntryRef[], deadline: AbortSignal): Promise<Lacking[] | 'no-answer' | 'unreadable'> {
    const { api, service, portName, serverName, logger } = this.#options;
    try {
      const replicas = await listReadyReplicas(api, service, portName, deadline);
      const probe = { path: SERVED_ENTRIES_PATH, serverName, caBundlePem: this.#options.caBundlePem(), timeoutMs: PROBE_TIMEOUT_MS, signal: deadline };
      const results = await Promise.all(replicas.map((replica) => probeReplicaEntries(replica, probe)));
      for (const result of results) if ('unknown' in result) logger.debug({ replica: result.replica, why: result.unknown }, 'a ready replica did not say which entries it serves');
      return lackingOf(results, wanted);
    } catch (error) {
      if (isForbidden(error)) {
        logger.warn({ service: service.name, error: formatApiFailure(error) }, 'cannot read the EndpointSlices of the Service (RBAC: list endpointslices); registering new entries without waiting for the replicas');
        return 'unreadable';
      }
      return 'no-answer';
    }
  }
}
