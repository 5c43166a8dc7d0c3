import { WEBHOOK_DEFAULTS, type PolicyEntry } from './policy.js';
import type { CompiledRule } from './rule-kind.js';
import { BUILT_IN_RULES } from './rules/index.js';
import type { RuleMode, WebhookType } from './types.js';
import { readWebhookSpec, WEBHOOK_SPEC_FIELDS } from './webhook-spec-fields.js';
import { optional, required, type YamlField } from './yaml-field.js';

export const ENTRY_FIELDS = ['name', 'kind', 'mode', 'params', ...WEBHOOK_SPEC_FIELDS.filter((f) => f !== 'name')] as const;

const MODES: readonly RuleMode[] = ['enforce', 'warn', 'audit'];

export interface ParsedEntry {
  /** As far as they could be read: duplicates are found even among entries with other problems. */
  name?: string;
  type?: WebhookType;
  nameField?: YamlField;
  /** Present when the entry has no problem. */
  built?: { entry: PolicyEntry; rule: CompiledRule };
}

/** One `webhooks[i]` entry: its built-in rule, parameters and webhook fields, with defaults. */
export function readEntry(field: YamlField): ParsedEntry {
  const fields = field.map(ENTRY_FIELDS);
  if (!fields) return {};
  const kinds = [...BUILT_IN_RULES.keys()];
  const kind = required(fields, 'kind', field, (f) => f.oneOf(kinds), `one of ${kinds.join(', ')}`);
  const ruleKind = kind === undefined ? undefined : BUILT_IN_RULES.get(kind);
  const mode = optional(fields, 'mode', (f) => f.oneOf(MODES), WEBHOOK_DEFAULTS.mode);
  const spec = readWebhookSpec(fields, field, ruleKind?.type, ruleKind?.defaultRules ?? []);
  const rule = ruleKind?.compile(fields.get('params'), field);
  const nameField = fields.get('name');
  const known: ParsedEntry = { name: rawName(nameField), type: ruleKind?.type, nameField };
  if (!spec || !rule || !mode || !ruleKind) return known;
  return { ...known, built: { entry: { spec, kind: ruleKind.kind, mode }, rule } };
}

/** The name as written, for duplicate detection in an entry that has other problems. */
function rawName(field: YamlField | undefined): string | undefined {
  const node = field?.node as { value?: unknown } | undefined;
  return typeof node?.value === 'string' ? node.value : undefined;
}
