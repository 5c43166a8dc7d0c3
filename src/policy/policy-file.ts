import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { DEFAULT_EXCLUDED_NAMESPACES } from '../webhooks/excluded-namespaces.js';
import { DNS1123_LABEL_HINT, isDns1123Label } from '../admission/kube-names.js';
import { DEFAULT_ENGINE, ENGINES } from './engine.js';
import { entryDefinition } from './entry-definition.js';
import { GROUPING_MODES } from '../webhooks/grouping.js';
import { WEBHOOK_DEFAULTS } from '../webhooks/webhook-spec-fields.js';
import { POLICY_API_VERSION, POLICY_KIND, type Policy, type PolicyEntry, type PolicyLoadResult, type PolicyOptions } from './policy.js';
import { readEntry, type ParsedEntry } from './policy-entry.js';
import { mutatingRuleHandler, requestRuleHandler, validatingRuleHandler } from './rule-handler.js';
import type { Webhook } from '../admission/types.js';
import { optional, ProblemList, required, YamlField } from '../util/yaml-field.js';

type BuiltEntry = NonNullable<ParsedEntry['built']>;

const TOP_LEVEL_FIELDS = ['apiVersion', 'kind', 'excludedNamespaces', 'grouping', 'engine', 'report', 'webhooks'] as const;

function readExcludedNamespaces(field: YamlField): string[] | undefined {
  return field.stringList((namespace) => (isDns1123Label(namespace) ? undefined : `"${namespace}" is not a namespace name; it must be ${DNS1123_LABEL_HINT}`));
}

/** Names must be unique per webhook type: they are the URL paths. */
function reportDuplicateNames(parsed: readonly ParsedEntry[], problems: ProblemList): void {
  const firstLine = new Map<string, number>();
  for (const { name, type, nameField } of parsed) {
    if (name === undefined || type === undefined || nameField === undefined) continue;
    const key = `${type}/${name}`;
    const first = firstLine.get(key);
    if (first === undefined) firstLine.set(key, problems.lines.linePos(nameField.offset).line);
    else nameField.report(`duplicate ${type} webhook name "${name}" (first used on line ${first}); each needs its own name`);
  }
}

function buildWebhook({ entry, rule }: BuiltEntry, excludedNamespaces: readonly string[]): Webhook {
  const options = { mode: entry.mode, excludedNamespaces, source: entry.spec.name };
  if ('decide' in rule) {
    return {
      ...entry.spec,
      type: 'validating',
      handler: requestRuleHandler(rule, options),
      ...(rule.usesAuthorizer ? { usesAuthorizer: true } : {}),
      ...(rule.readsNamespaceObject ? { readsNamespaceObject: true } : {}),
    };
  }
  if (rule.type === 'validating') return { ...entry.spec, type: 'validating', handler: validatingRuleHandler(rule, options) };
  return { ...entry.spec, type: 'mutating', handler: mutatingRuleHandler(rule, options) };
}

/** The YAML root of `text`, or undefined after reporting why there is none. */
function rootOf(text: string, problems: ProblemList): YamlField | undefined {
  const doc = parseDocument(text, { lineCounter: problems.lines, prettyErrors: false, uniqueKeys: true });
  for (const error of doc.errors) problems.add(error.pos[0], `invalid YAML: ${error.message.split('\n')[0]}`);
  if (problems.size > 0) return undefined;
  if (doc.contents === null) {
    problems.add(0, `the policy file is empty; it needs apiVersion: ${POLICY_API_VERSION}, kind: ${POLICY_KIND} and a webhooks list`);
    return undefined;
  }
  return new YamlField(problems, doc, doc.contents, '');
}

/**
 * Validates a policy file's text and builds its webhooks. Reports every problem at once, each
 * as `<path>:<line>:<col>: <what is wrong and what would be valid>`. `ownNamespace` is excluded
 * in the handlers besides the file's excludedNamespaces.
 */
export function parsePolicy(text: string, path: string, options: PolicyOptions = {}): PolicyLoadResult {
  const problems = new ProblemList(path, new LineCounter());
  const root = rootOf(text, problems);
  const fields = root?.map(TOP_LEVEL_FIELDS);
  if (!root || !fields) return { ok: false, errors: problems.format() };
  required(fields, 'apiVersion', root, (f) => f.oneOf([POLICY_API_VERSION]), POLICY_API_VERSION);
  required(fields, 'kind', root, (f) => f.oneOf([POLICY_KIND]), POLICY_KIND);
  const excludedNamespaces = optional(fields, 'excludedNamespaces', readExcludedNamespaces, [...DEFAULT_EXCLUDED_NAMESPACES]);
  const grouping = optional(fields, 'grouping', (f) => f.oneOf(GROUPING_MODES), WEBHOOK_DEFAULTS.grouping);
  const engineField = fields.get('engine');
  const engine = optional(fields, 'engine', (f) => f.oneOf(ENGINES), DEFAULT_ENGINE);
  const report = optional(fields, 'report', (f) => f.boolean(), true);
  const entries = required(fields, 'webhooks', root, (f) => f.list(), 'a list of rule entries (it may be empty)') ?? [];
  const engineLine = engineField ? problems.lines.linePos(engineField.offset).line : undefined;
  const parsed = entries.map((entry) => readEntry(entry, options, { engine: engine ?? DEFAULT_ENGINE, ...(engineLine ? { line: engineLine } : {}) }, report ?? true));
  reportDuplicateNames(parsed, problems);
  const built = parsed.flatMap((p, i) => (p.built ? [{ ...p.built, source: entries[i]! }] : []));
  if (problems.size === 0 && built.length !== parsed.length) problems.add(0, 'some entries could not be read');
  if (problems.size > 0 || !excludedNamespaces || !grouping || !engine || report === undefined) return { ok: false, errors: problems.format() };

  const handlerExclusions = options.ownNamespace ? [...new Set([...excludedNamespaces, options.ownNamespace])] : excludedNamespaces;
  const definitionOf = (source: YamlField): string => entryDefinition(source.node.toJS(source.doc), handlerExclusions);
  const entriesBuilt = built.map((b): PolicyEntry => ({ ...b.entry, definition: definitionOf(b.source) }));
  const policy: Policy = { path, excludedNamespaces, grouping, ...(engine !== DEFAULT_ENGINE ? { engine } : {}), report, entries: entriesBuilt };
  return { ok: true, policy, webhooks: built.map((b) => buildWebhook(b, handlerExclusions)) };
}

/** Reads and parses a policy file; an unreadable file is one error naming the path and the cause. */
export async function loadPolicyFile(path: string, options: PolicyOptions = {}): Promise<PolicyLoadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    return { ok: false, errors: [`${path}: cannot read the policy file: ${cause}`] };
  }
  return parsePolicy(text, path, options);
}

/** A policy file that does not load (or cannot run on the cluster): every problem, one per line. */
export class PolicyFileError extends Error {
  override readonly name = 'PolicyFileError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid policy file:\n${problems.join('\n')}`);
  }
}
