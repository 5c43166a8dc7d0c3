/**
 * kube-apiserver's webhook connection pools (contract 3.4 and 6): each kube-apiserver keeps its
 * own, and within it each webhook client configuration (service and path, or URL, with its
 * caBundle) gets a transport of its own, so up to 25 idle connections per webhook path. A
 * kube-apiserver that restarted (a new incarnation) starts with none: its old ones are closed.
 */
import type { Agent } from 'node:https';
import type { AdmissionSource } from '../fake-apiserver/index.js';
import { GoTransportAgent } from './go-transport-agent.js';
import type { Webhook } from './select.js';

/** The part of a webhook's clientConfig that its transport is cached by (its name is not). */
export function clientConfigKey(hook: Pick<Webhook, 'clientConfig'>): string {
  const { service, url, caBundle } = hook.clientConfig;
  const where = service ? `service:${service.namespace}/${service.name}:${service.port ?? 443}${service.path ?? ''}` : `url:${url ?? ''}`;
  return `${where} ca:${caBundle ?? ''}`;
}

export class ConnectionPools {
  readonly #newAgent: () => Agent;
  readonly #pools = new Map<string, Map<string, Agent>>();
  readonly #incarnations = new Map<string, number>();

  constructor(newAgent: () => Agent = () => new GoTransportAgent()) {
    this.#newAgent = newAgent;
  }

  /** The pool `source` uses for `hook`'s client configuration. */
  agentFor(source: Pick<AdmissionSource, 'name' | 'incarnation'>, hook: Pick<Webhook, 'clientConfig'>): Agent {
    if (this.#incarnations.get(source.name) !== source.incarnation) {
      this.#destroy(source.name);
      this.#incarnations.set(source.name, source.incarnation);
    }
    let pools = this.#pools.get(source.name);
    if (!pools) {
      pools = new Map();
      this.#pools.set(source.name, pools);
    }
    const key = clientConfigKey(hook);
    let agent = pools.get(key);
    if (!agent) {
      agent = this.#newAgent();
      pools.set(key, agent);
    }
    return agent;
  }

  /** How many pools each kube-apiserver holds now. */
  get sizes(): Record<string, number> {
    return Object.fromEntries([...this.#pools].map(([name, pools]) => [name, pools.size]));
  }

  destroy(): void {
    for (const name of [...this.#pools.keys()]) this.#destroy(name);
  }

  #destroy(name: string): void {
    for (const agent of this.#pools.get(name)?.values() ?? []) agent.destroy();
    this.#pools.delete(name);
  }
}
