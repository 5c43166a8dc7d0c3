import { EventEmitter } from 'node:events';
import { parseWebhookPath, webhookPath } from './group-path.js';
import type { WebhookGroup } from './grouping.js';
import { isDns1123Label } from '../admission/kube-names.js';
import type { Webhook, WebhookType } from '../admission/types.js';

/**
 * The webhooks served right now: every entry this replica can run (by type and name, whatever
 * path names it) and the groups it registers. Replaced as a whole (a new policy file version),
 * so a request sees either the old set or the new one, never a mix. Emits `change` with the new
 * entries.
 */
export class WebhookRegistry extends EventEmitter<{ change: [readonly Webhook[]] }> {
  /** By type, then name: a lookup on every review builds no key. */
  #entries: Record<WebhookType, Map<string, Webhook>> = { validating: new Map(), mutating: new Map() };
  #groups = new Map<string, WebhookGroup>();
  #list: readonly Webhook[] = [];
  #groupList: readonly WebhookGroup[] = [];

  constructor(webhooks: readonly Webhook[] = [], groups: readonly WebhookGroup[] = []) {
    super();
    this.replace(webhooks, groups);
  }

  /**
   * Validates and installs `webhooks` and the `groups` made of them; throws (keeping the current
   * set) on a bad name, a duplicate, or a group member that is not among `webhooks`.
   */
  replace(webhooks: readonly Webhook[], groups: readonly WebhookGroup[] = []): void {
    const entries: Record<WebhookType, Map<string, Webhook>> = { validating: new Map(), mutating: new Map() };
    for (const webhook of webhooks) {
      if (!isDns1123Label(webhook.name)) {
        throw new Error(
          `webhook name "${webhook.name}" must be a DNS-1123 label (lowercase letters, digits and "-", at most 63): kube-apiserver refuses other service paths`,
        );
      }
      const ofType = entries[webhook.type];
      if (ofType.has(webhook.name)) throw new Error(`two ${webhook.type} webhooks are named "${webhook.name}"`);
      ofType.set(webhook.name, webhook);
    }
    const byPath = new Map<string, WebhookGroup>();
    for (const group of groups) {
      const stranger = group.members.find((member) => entries[member.type].get(member.name) !== member);
      if (stranger) throw new Error(`group "${group.name}" serves "${stranger.name}", which is not among the webhooks served`);
      byPath.set(webhookPath(group), group);
    }
    this.#entries = entries;
    this.#groups = byPath;
    this.#list = Object.freeze([...webhooks]);
    this.#groupList = Object.freeze([...groups]);
    this.emit('change', this.#list);
  }

  /** The entry named `name`, whatever path it is called on (`/validate/<name>` or inside a group's). */
  lookup(type: WebhookType, name: string): Webhook | undefined {
    return this.#entries[type].get(name);
  }

  /** The entry served at its own path (`/validate/<name>`, `/mutate/<name>`). */
  byPath(path: string): Webhook | undefined {
    const parsed = parseWebhookPath(path);
    return parsed && !parsed.members ? this.lookup(parsed.type, parsed.name) : undefined;
  }

  /** The group registered at `path` (its members exactly as this replica groups them). */
  group(path: string): WebhookGroup | undefined {
    return this.#groups.get(path);
  }

  /** Every entry served now. */
  list(): readonly Webhook[] {
    return this.#list;
  }

  /** The groups this replica registers now (none with grouping `none`). */
  groups(): readonly WebhookGroup[] {
    return this.#groupList;
  }
}
