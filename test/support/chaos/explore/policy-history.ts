/**
 * The policy files a chaos run writes into the install's ConfigMap, oldest first. The run starts
 * from four rules and changes them the way platform teams do: an edit (a rule's mode or timeout,
 * a default label's value, a removed rule back), a rename, a removal. The anchor rule
 * (denyPrivileged, always enforcing) is renamed but never removed, so a privileged Pod must always
 * be refused by whatever webhook carries it. Every version is kept: the invariants judge a call
 * by the rule its webhook came from, and convergence by the newest file.
 */
import { stringify } from 'yaml';
import type { Random } from './random.js';

export type RuleKind = 'denyPrivileged' | 'denyHostNamespaces' | 'requireLabels' | 'defaultLabels';
export type Mode = 'enforce' | 'warn' | 'audit';

export interface PolicyRule {
  name: string;
  kind: RuleKind;
  mode?: Mode;
  timeoutSeconds?: number;
  params?: Record<string, unknown>;
}

export interface PolicyVersion {
  version: number;
  /** Date.now() when the ConfigMap was written. */
  writtenAt: number;
  rules: PolicyRule[];
  text: string;
  /** What changed, for the operation log. */
  change: string;
}

export type PolicyChange = 'edit' | 'rename' | 'removal';

const ANCHOR_KIND: RuleKind = 'denyPrivileged';

function initialRules(): PolicyRule[] {
  return [
    { name: 'deny-privileged', kind: 'denyPrivileged', mode: 'enforce' },
    { name: 'deny-host-namespaces', kind: 'denyHostNamespaces', mode: 'enforce' },
    { name: 'require-app-label', kind: 'requireLabels', mode: 'warn', params: { labels: [{ key: 'app' }] } },
    { name: 'default-labels', kind: 'defaultLabels', params: { labels: { 'kube-admission-server/defaulted': 'true' } } },
  ];
}

function render(rules: readonly PolicyRule[], version: number): string {
  const header = `# chaos policy version ${version}\n`;
  return header + stringify({ apiVersion: 'kube-admission-server/v1', kind: 'Policy', excludedNamespaces: ['kube-system'], webhooks: rules });
}

export class PolicyHistory {
  readonly versions: PolicyVersion[] = [];
  /** Every rule name ever written, with its kind: a webhook is judged by the rule it came from. */
  readonly #kinds = new Map<string, RuleKind>();
  #renames = 0;

  constructor() {
    this.#add(initialRules(), 'the initial policy', 0);
  }

  get newest(): PolicyVersion {
    return this.versions.at(-1)!;
  }

  /** The kind of the rule a webhook name (`<rule>.<service>.<namespace>.svc`) came from. */
  kindOfWebhook(webhook: string): RuleKind | undefined {
    return this.#kinds.get(webhook.split('.')[0] ?? '');
  }

  /** The mode the rule of `webhook` has in the newest file (undefined: not in it). */
  modeNow(webhook: string): Mode | undefined {
    const rule = this.newest.rules.find((r) => r.name === webhook.split('.')[0]);
    return rule ? (rule.mode ?? 'enforce') : undefined;
  }

  #add(rules: PolicyRule[], change: string, writtenAt: number): PolicyVersion {
    const version = this.versions.length;
    for (const rule of rules) {
      this.#kinds.set(rule.name, rule.kind);
    }
    const entry = { version, writtenAt, rules, text: render(rules, version), change };
    this.versions.push(entry);
    return entry;
  }

  /**
   * The next version: `change` drawn by the schedule, its details by `random` (drawn up front,
   * so the seed decides them). Returns the version to write; the caller records the write time.
   */
  next(change: PolicyChange, random: Random): PolicyVersion {
    const rules = this.newest.rules.map((rule) => structuredClone(rule));
    const described = this.#apply(change, rules, random);
    return this.#add(rules, described, 0);
  }

  #apply(change: PolicyChange, rules: PolicyRule[], random: Random): string {
    switch (change) {
      case 'rename': {
        const rule = random.pick(rules.filter((r) => r.kind === ANCHOR_KIND || r.kind === 'denyHostNamespaces'));
        const base = rule.name.replace(/-r\d+$/, '');
        const from = rule.name;
        rule.name = `${base}-r${++this.#renames}`;
        return `rule ${from} renamed ${rule.name}`;
      }
      case 'removal': {
        const removable = rules.filter((r) => r.kind !== ANCHOR_KIND);
        if (removable.length === 0) return this.#apply('edit', rules, random);
        const rule = random.pick(removable);
        rules.splice(rules.indexOf(rule), 1);
        return `rule ${rule.name} removed`;
      }
      case 'edit':
        return this.#edit(rules, random);
    }
  }

  #edit(rules: PolicyRule[], random: Random): string {
    const missing = initialRules().filter((initial) => !rules.some((r) => r.kind === initial.kind));
    if (missing.length > 0 && random.chance(0.5)) {
      const back = random.pick(missing);
      rules.push(back);
      return `rule ${back.name} added back`;
    }
    const rule = random.pick(rules);
    if (rule.kind === 'requireLabels') {
      const modes: Mode[] = ['warn', 'audit', 'enforce'];
      const next = modes[(modes.indexOf(rule.mode ?? 'enforce') + 1) % modes.length]!;
      rule.mode = next;
      return `rule ${rule.name} mode ${next}`;
    }
    if (rule.kind === 'defaultLabels') {
      const value = String(random.int(1, 9));
      rule.params = { labels: { 'kube-admission-server/defaulted': 'true', 'chaos.example.com/edit': value } };
      return `rule ${rule.name} labels edited (chaos.example.com/edit=${value})`;
    }
    rule.timeoutSeconds = rule.timeoutSeconds === 6 ? 5 : 6;
    return `rule ${rule.name} timeoutSeconds ${rule.timeoutSeconds}`;
  }

  /** Records when a version reached the API (the ConfigMap write). */
  written(version: PolicyVersion): void {
    version.writtenAt = Date.now();
  }
}
