import { isMap, isSeq, type Node } from 'yaml';
import { checkAgainstSchema } from './policy-schema.js';
import { hasControlCharacter } from '../admission/warning-text.js';
import { YamlField } from '../util/yaml-field.js';
import { compileExpression, type CompiledExpression, type ExpectedType } from '../cel/compile.js';
import type { CostContext } from '../cel/cost-estimate.js';
import { environmentWith, VALIDATION_VARIABLES } from '../cel/environment.js';
import type { CelAuditAnnotation, CelProgram, CelValidation, CelVariable, ValidationReason } from '../cel/validation-program.js';
import type { Environment } from '@marcbachmann/cel-js';

/** Compiles the expression in `field`; reports where it is and what is wrong with it. */
export function readExpression(field: YamlField, env: Environment, expected: ExpectedType, costContext?: CostContext): CompiledExpression | undefined {
  const source = field.text();
  if (source === undefined) return undefined;
  const result = compileExpression(env, source, expected, costContext);
  if (!result.ok) {
    field.report(`CEL expression ${result.problem}`);
    return undefined;
  }
  return result.expression;
}

/** Variables read before they are defined (or never defined) are a mistake the library cannot see. */
function checkVariableNames(field: YamlField, expression: CompiledExpression, known: ReadonlySet<string>): boolean {
  const unknown = [...expression.readsVariables].filter((name) => !known.has(name));
  if (unknown.length === 0) return true;
  const hint = known.size > 0 ? `defined before it: ${[...known].join(', ')}` : 'no variable is defined before it';
  field.report(`CEL expression reads variables.${unknown.join(', variables.')}, which is not defined before it (${hint})`);
  return false;
}

/** An expression field the schema already checked: compiled, and its variables known. */
function compiled(field: YamlField | undefined, env: Environment, expected: ExpectedType, known: ReadonlySet<string>, requestVariables: ReadonlySet<string>): CompiledExpression | undefined {
  // What is not a non-empty string is the schema's problem, already reported.
  const value = (field?.node as { value?: unknown } | undefined)?.value;
  if (!field || typeof value !== 'string' || value.trim() === '') return undefined;
  const expression = readExpression(field, env, expected, { requestVariables });
  return expression && checkVariableNames(field, expression, known) ? expression : undefined;
}

/** The fields of an item the schema already checked (a mapping of known fields). */
function fieldsOf(item: YamlField): Map<string, YamlField> {
  if (!isMap(item.node)) return new Map();
  const fields = new Map<string, YamlField>();
  for (const pair of item.node.items) {
    const key = (pair.key as { value?: unknown } | null)?.value;
    if (typeof key === 'string' && pair.value) fields.set(key, new YamlField(item.problems, item.doc, pair.value as Node, `${item.path}.${key}`));
  }
  return fields;
}

/** Whether a variable's value may be as large as the request: it reads the request, or a variable that does. */
function readsRequest(expression: CompiledExpression, requestVariables: ReadonlySet<string>): boolean {
  return ['object', 'oldObject', 'request', 'namespaceObject'].some((root) => expression.reads.has(root)) || [...expression.readsVariables].some((v) => requestVariables.has(v));
}

function readVariables(items: readonly YamlField[], env: Environment, known: Set<string>, requestVariables: Set<string>): (CelVariable | undefined)[] {
  return items.map((item) => {
    const fields = fieldsOf(item);
    const nameValue = (fields.get('name')?.node as { value?: unknown } | undefined)?.value;
    const name = typeof nameValue === 'string' ? nameValue : '';
    const expression = compiled(fields.get('expression'), env, 'any', known, requestVariables);
    if (expression && readsRequest(expression, requestVariables)) requestVariables.add(name);
    if (known.has(name)) fields.get('name')?.report(`duplicate variable name "${name}"`);
    const fresh = !known.has(name);
    known.add(name);
    return expression && fresh ? { name, expression } : undefined;
  });
}

/**
 * A validation's message; null when it holds a control character. kube-apiserver drops a warning
 * that holds one without a word (a warn rollout would show nothing) and refuses a policy whose
 * message has a line break, so it is refused here too, with its line. The trailing line break
 * of a YAML block scalar is trimmed first, as kube-apiserver trims messages.
 */
function readMessage(field: YamlField | undefined): string | undefined | null {
  const value = (field?.node as { value?: unknown } | undefined)?.value;
  if (typeof value !== 'string') return undefined;
  if (!hasControlCharacter(value.trim())) return value;
  field?.report('must be one line without control characters (line breaks, tabs): kube-apiserver drops a warning that holds one without telling anyone; write it on one line (a YAML ">-" block folds lines into one)');
  return null;
}

function readValidations(items: readonly YamlField[], env: Environment, known: ReadonlySet<string>, requestVariables: ReadonlySet<string>): (CelValidation | undefined)[] {
  return items.map((item) => {
    const fields = fieldsOf(item);
    const expression = compiled(fields.get('expression'), env, 'bool', known, requestVariables);
    const messageField = fields.get('messageExpression');
    const messageExpression = compiled(messageField, env, 'string', known, requestVariables);
    const message = readMessage(fields.get('message'));
    if (!expression || (messageField && !messageExpression) || message === null) return undefined;
    const validation: CelValidation = { expression };
    const reason = (fields.get('reason')?.node as { value?: unknown } | undefined)?.value as ValidationReason | undefined;
    if (message !== undefined) validation.message = message;
    if (messageExpression) validation.messageExpression = messageExpression;
    if (reason) validation.reason = reason;
    return validation;
  });
}

/** A valueExpression's key: what kube-apiserver accepts after `<name>/` in an audit annotation key. */
function readAuditAnnotations(items: readonly YamlField[], env: Environment, known: ReadonlySet<string>, requestVariables: ReadonlySet<string>): (CelAuditAnnotation | undefined)[] {
  const keys = new Set<string>();
  return items.map((item) => {
    const fields = fieldsOf(item);
    const keyField = fields.get('key');
    const key = (keyField?.node as { value?: unknown } | undefined)?.value;
    if (typeof key === 'string' && keys.has(key)) keyField?.report(`duplicate audit annotation key "${key}"`);
    const fresh = typeof key === 'string' && !keys.has(key);
    if (typeof key === 'string') keys.add(key);
    const valueExpression = compiled(fields.get('valueExpression'), env, 'any', known, requestVariables);
    return typeof key === 'string' && fresh && valueExpression ? { key, valueExpression } : undefined;
  });
}

/** The entry's params as plain data (any shape: it is the rule's own), or null. */
function paramsOf(field: YamlField | undefined): unknown {
  if (!field) return null;
  return isMap(field.node) || isSeq(field.node) || 'value' in field.node ? field.node.toJSON() : null;
}

export interface ReadCelProgram {
  program: CelProgram;
  /** Every top-level variable some expression reads. */
  reads: ReadonlySet<string>;
}

/**
 * A cel entry's variables, validations and params; undefined after reporting every problem.
 * Their structure is the schema's to check (schema/policy.schema.json); what is left here is
 * what a schema cannot say: that each expression compiles, has the right type, and reads only
 * variables defined before it.
 */
export function readCelProgram(fields: Map<string, YamlField>, entry: YamlField): ReadCelProgram | undefined {
  const variablesField = fields.get('variables');
  const validationsField = fields.get('validations');
  if (!validationsField) {
    entry.report('missing required field "validations" (a list of { expression, message, messageExpression, reason })');
    return undefined;
  }
  const auditField = fields.get('auditAnnotations');
  const structureOk = [
    variablesField ? checkAgainstSchema(variablesField, 'celVariables') : true,
    checkAgainstSchema(validationsField, 'celValidations'),
    auditField ? checkAgainstSchema(auditField, 'celAuditAnnotations') : true,
  ];
  // Expressions are compiled even when the structure has problems, so every problem shows at once.
  const env = environmentWith(VALIDATION_VARIABLES);
  const known = new Set<string>();
  const itemsOf = (field: YamlField | undefined) => (field && isSeq(field.node) ? field.node.items.map((node, i) => new YamlField(field.problems, field.doc, node as Node, `${field.path}[${i}]`)) : []);
  const requestVariables = new Set<string>();
  const variables = readVariables(itemsOf(variablesField), env, known, requestVariables);
  const validations = readValidations(itemsOf(validationsField), env, known, requestVariables);
  const auditAnnotations = readAuditAnnotations(itemsOf(auditField), env, known, requestVariables);
  const complete = <T>(list: (T | undefined)[]): list is T[] => list.every((v) => v !== undefined);
  if (structureOk.includes(false) || !complete(variables) || !complete(validations) || !complete(auditAnnotations)) return undefined;
  const program: CelProgram = { variables, validations, auditAnnotations, params: paramsOf(fields.get('params')) };
  const reads = new Set<string>();
  const expressions = [
    ...program.variables.map((v) => v.expression),
    ...program.validations.flatMap((v) => [v.expression, v.messageExpression ?? v.expression]),
    ...program.auditAnnotations.map((a) => a.valueExpression),
  ];
  for (const expression of expressions) {
    for (const name of expression.reads) reads.add(name);
  }
  return { program, reads };
}
