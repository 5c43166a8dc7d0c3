import type { Logger } from 'pino';
import type { KubeApi } from '../kube/client.js';
import { waitForReadyEndpoint, type ServiceRef } from './service-endpoints.js';
import { sleep } from '../util/abort.js';

/**
 * How long a configuration that does not exist yet waits for a ready endpoint of the Service
 * before it is created anyway: the leader's own readiness probe (every 5 s in the manifests) and
 * the EndpointSlice controller take seconds; a minute is a dozen probe periods. An escape (scale
 * to zero and back) must not hang on a Service that never gets one.
 */
export const ENDPOINT_WAIT_MS = 60_000;

/**
 * After a ready endpoint first shows in the EndpointSlices, how long before the configuration is
 * created: kube-apiserver dials the Service's ClusterIP, which works once kube-proxy on its node
 * has programmed the new endpoint (its rules sync within about a second of the slice change).
 */
export const ENDPOINT_PROPAGATION_MS = 1000;

export interface EndpointGateOptions {
  api: KubeApi;
  service: ServiceRef;
  /** This replica serves, self-checked: it may be Ready before it registers, so its own endpoint counts. */
  serving: () => void;
  logger: Logger;
  timeoutMs?: number;
  propagationMs?: number;
}

/**
 * Keeps the first write of a configuration that does not exist back until kube-apiserver can reach
 * the webhook: a created configuration is called at once, and under failurePolicy Fail a call to a
 * Service without a ready endpoint rejects the user's write ("no endpoints available"). That is a
 * fresh install, or a scale-up from zero (the documented escape) after the exiting pods deleted the
 * configurations. The leader first lets itself be Ready (it may be the only replica), then waits,
 * logged, for a ready endpoint and the propagation time, bounded: past the bound it registers anyway
 * with a warning. Only in a pod: a process outside one is no endpoint of the Service, and nothing it
 * does makes one ready. Concurrent callers (both configurations) share one wait.
 */
export class EndpointGate {
  readonly #options: EndpointGateOptions;
  #waiting: Promise<void> | undefined;
  /** Whether a wait of this process has seen a ready endpoint: a later restore finding one at once skips the propagation time. */
  #seenReady = false;

  constructor(options: EndpointGateOptions) {
    this.#options = options;
  }

  /** Resolves when a configuration may be created; rejects only when `signal` aborts. */
  beforeCreate(signal: AbortSignal): Promise<void> {
    this.#waiting ??= this.#wait(signal).finally(() => (this.#waiting = undefined));
    return this.#waiting;
  }

  async #wait(signal: AbortSignal): Promise<void> {
    const { api, service, logger } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? ENDPOINT_WAIT_MS;
    const propagationMs = this.#options.propagationMs ?? ENDPOINT_PROPAGATION_MS;
    this.#options.serving();
    logger.info({ service: service.name, boundMs: timeoutMs }, 'a webhook configuration is to be created: waiting for a ready endpoint of the Service first');
    const result = await waitForReadyEndpoint(api, service, { timeoutMs, signal, logger });
    switch (result.outcome) {
      case 'ready': {
        // A restore while this process serves finds its own endpoint, ready for long: no need to wait.
        const settled = this.#seenReady && result.readyAtFirstLook;
        this.#seenReady = true;
        logger.info({ service: service.name, waitedMs: result.waitedMs, propagationMs: settled ? 0 : propagationMs }, 'the Service has a ready endpoint; creating the webhook configuration');
        if (!settled) await sleep(propagationMs, signal);
        return;
      }
      case 'timed-out':
        logger.warn(
          { service: service.name, waitedMs: result.waitedMs },
          'the Service has no ready endpoint within the bound; creating the webhook configuration anyway: calls fail ("no endpoints") until one is ready, rejecting writes under failurePolicy Fail',
        );
        return;
      case 'unreadable':
        logger.warn({ service: service.name, error: result.error }, 'cannot read the EndpointSlices of the Service (RBAC: list and watch endpointslices); creating the webhook configuration without waiting');
        return;
    }
  }
}
