import { EventEmitter } from 'node:events';
import { isDns1123Label } from './kube-names.js';
import { webhookPath, type Webhook, type WebhookType } from './types.js';

/**
 * The webhooks served right now. Replaced as a whole (a new policy file version), so a request
 * sees either the old set or the new one, never a mix. Emits `change` with the new list.
 */
export class WebhookRegistry extends EventEmitter<{ change: [readonly Webhook[]] }> {
  #byPath = new Map<string, Webhook>();
  #list: readonly Webhook[] = [];

  constructor(webhooks: readonly Webhook[] = []) {
    super();
    this.replace(webhooks);
  }

  /** Validates and installs `webhooks`; throws (keeping the current set) on a bad name or a duplicate. */
  replace(webhooks: readonly Webhook[]): void {
    const byPath = new Map<string, Webhook>();
    for (const webhook of webhooks) {
      if (!isDns1123Label(webhook.name)) {
        throw new Error(
          `webhook name "${webhook.name}" must be a DNS-1123 label (lowercase letters, digits and "-", at most 63): kube-apiserver refuses other service paths`,
        );
      }
      const path = webhookPath(webhook);
      if (byPath.has(path)) throw new Error(`two ${webhook.type} webhooks are named "${webhook.name}"`);
      byPath.set(path, webhook);
    }
    this.#byPath = byPath;
    this.#list = Object.freeze([...webhooks]);
    this.emit('change', this.#list);
  }

  /** The webhook served at `/validate/<name>` or `/mutate/<name>`. */
  lookup(type: WebhookType, name: string): Webhook | undefined {
    return this.#byPath.get(webhookPath({ type, name }));
  }

  /** The webhook served at `path`. */
  byPath(path: string): Webhook | undefined {
    return this.#byPath.get(path);
  }

  /** Every webhook served now. */
  list(): readonly Webhook[] {
    return this.#list;
  }
}
