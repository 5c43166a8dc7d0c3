import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';
import { DEFAULT_ENGINE, ENGINES, entryObstacles, WEBHOOK_ONLY_FIELDS } from './engine.js';
import { REPORT_SEVERITIES, type Engine, type PolicyEntry, type PolicyOptions, type ReportSettings } from './policy.js';
import { WEBHOOK_DEFAULTS } from '../webhooks/webhook-spec-fields.js';
import type { CompiledRule } from './rule-kind.js';
import { BUILT_IN_RULES } from './rules/index.js';
import type { RuleMode, WebhookType } from '../admission/types.js';
import { readWebhookSpec, WEBHOOK_SPEC_FIELDS } from '../webhooks/webhook-spec-fields.js';
import { optional, required, type YamlField } from '../util/yaml-field.js';

const KIND_FIELDS = [...new Set([...BUILT_IN_RULES.values()].flatMap((rule) => rule.ownFields ?? []))];

/** What the background audit reads of an entry (never what kube-apiserver is sent). */
const REPORT_FIELDS = ['report', 'severity', 'category'] as const;

export const ENTRY_FIELDS = ['name', 'kind', 'mode', 'engine', 'params', ...REPORT_FIELDS, ...WEBHOOK_SPEC_FIELDS.filter((f) => f !== 'name'), ...KIND_FIELDS] as const;

const MODES: readonly RuleMode[] = ['enforce', 'warn', 'audit'];

export interface ParsedEntry {
  /** As far as they could be read: duplicates are found even among entries with other problems. */
  name?: string;
  type?: WebhookType;
  nameField?: YamlField;
  /** Present when the entry has no problem. */
  built?: { entry: PolicyEntry; rule: CompiledRule };
}

/** The policy's `engine`, which entries that set none follow; `line` is where the policy set it. */
export interface PolicyEngine {
  engine: Engine;
  line?: number;
}

/**
 * The entry's report settings: `report` (else the policy's), `severity` and `category`. A mutating
 * entry has no results to report, so it takes none of them.
 */
function readReport(fields: Map<string, YamlField>, type: WebhookType | undefined, policyReport: boolean): ReportSettings | undefined {
  if (type === 'mutating') {
    for (const name of REPORT_FIELDS) fields.get(name)?.report(`"${name}" is for validating entries: the background audit reports their results, and a mutating entry has none`);
    return REPORT_FIELDS.some((name) => fields.has(name)) ? undefined : { enabled: false };
  }
  const enabled = optional(fields, 'report', (f) => f.boolean(), policyReport);
  const severity = optional(fields, 'severity', (f) => f.oneOf(REPORT_SEVERITIES), undefined);
  const category = optional(fields, 'category', (f) => f.text(), undefined);
  if (enabled === undefined || (fields.has('severity') && !severity) || (fields.has('category') && category === undefined)) return undefined;
  return { enabled, ...(severity ? { severity } : {}), ...(category ? { category } : {}) };
}

/** One `webhooks[i]` entry: its built-in rule, parameters and webhook fields, with defaults. */
export function readEntry(field: YamlField, options: PolicyOptions = {}, policyEngine: PolicyEngine = { engine: DEFAULT_ENGINE }, policyReport = true): ParsedEntry {
  const fields = field.map(ENTRY_FIELDS);
  if (!fields) return {};
  const kinds = [...BUILT_IN_RULES.keys()];
  const kind = required(fields, 'kind', field, (f) => f.oneOf(kinds), `one of ${kinds.join(', ')}`);
  const ruleKind = kind === undefined ? undefined : BUILT_IN_RULES.get(kind);
  const mode = optional(fields, 'mode', (f) => f.oneOf(MODES), WEBHOOK_DEFAULTS.mode);
  const engine = optional(fields, 'engine', (f) => f.oneOf(ENGINES), policyEngine.engine);
  // An unknown kind's rules are still checked, but not required (the kind is the problem).
  const spec = readWebhookSpec(fields, field, ruleKind?.type, ruleKind ? ruleKind.defaultRules : [], defaultsMode(fields, mode), options.kubernetesVersion);
  for (const own of KIND_FIELDS) {
    if (ruleKind && fields.has(own) && !ruleKind.ownFields?.includes(own)) {
      fields.get(own)?.report(`only entries of kind ${kindsTaking(own)} take "${own}"; this one is ${ruleKind.kind}`);
    }
  }
  const rule = ruleKind?.compile(fields.get('params'), field, fields, options);
  const report = readReport(fields, ruleKind?.type, policyReport);
  const nameField = fields.get('name');
  const known: ParsedEntry = { name: rawName(nameField), type: ruleKind?.type, nameField };
  if (!spec || !rule || !mode || !ruleKind || !engine || !report) return known;
  const webhookOnlyFields = WEBHOOK_ONLY_FIELDS.filter((f) => fields.has(f));
  const entry: PolicyEntry = {
    spec,
    kind: ruleKind.kind,
    mode,
    ...(engine !== DEFAULT_ENGINE ? { engine } : {}),
    report,
    digest: createHash('sha256').update(canonicalJson(field.value())).digest('base64'),
    ...('native' in rule && rule.native ? { native: rule.native } : {}),
    ...('nativeMutation' in rule && rule.nativeMutation ? { nativeMutation: rule.nativeMutation } : {}),
    ...(webhookOnlyFields.length > 0 ? { webhookOnlyFields } : {}),
  };
  if (engine === 'native' && !nativePossible(entry, field, fields, policyEngine)) return known;
  return { ...known, built: { entry, rule } };
}

/**
 * `engine: native` on an entry kube-apiserver cannot run is refused at load, at the line that
 * asked for it, with the way out; `auto` falls back at the leader's term start instead.
 */
function nativePossible(entry: PolicyEntry, field: YamlField, fields: Map<string, YamlField>, policyEngine: PolicyEngine): boolean {
  const obstacles = entryObstacles(entry);
  if (obstacles.length === 0) return true;
  const own = fields.get('engine');
  const asked = own ? 'engine: native' : `the policy's engine: native${policyEngine.line ? ` (line ${policyEngine.line})` : ''}`;
  const fix = own ? 'use engine: webhook, or engine: auto to run it natively where it can' : 'set engine: webhook on this entry, or make the policy\'s engine auto';
  for (const obstacle of obstacles) {
    const at = WEBHOOK_ONLY_FIELDS.find((f) => obstacle.startsWith(`${f} `));
    const target = (at && fields.get(at)) || own || fields.get('kind') || field;
    target.report(`${asked} cannot run this entry inside kube-apiserver: ${obstacle}; ${at ? `remove ${at}, or ` : ''}${fix}`);
  }
  return false;
}

/** The mode the defaults follow: validationActions without Deny never deny, so they fail open like warn. */
function defaultsMode(fields: Map<string, YamlField>, mode: RuleMode | undefined): RuleMode {
  const actions = fields.get('validationActions')?.node.toJSON() as unknown;
  if (!fields.has('mode') && Array.isArray(actions) && !actions.includes('Deny')) return 'warn';
  return mode ?? WEBHOOK_DEFAULTS.mode;
}

function kindsTaking(field: string): string {
  return [...BUILT_IN_RULES.values()].filter((rule) => rule.ownFields?.includes(field)).map((rule) => rule.kind).join(', ');
}

/** The name as written, for duplicate detection in an entry that has other problems. */
function rawName(field: YamlField | undefined): string | undefined {
  const node = field?.node as { value?: unknown } | undefined;
  return typeof node?.value === 'string' ? node.value : undefined;
}
