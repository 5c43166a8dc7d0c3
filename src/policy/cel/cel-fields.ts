import { isMap, isSeq } from 'yaml';
import { optional, required, type YamlField } from '../yaml-field.js';
import { compileExpression, type CompiledExpression, type ExpectedType } from './compile.js';
import { environmentWith, VALIDATION_VARIABLES } from './environment.js';
import { VALIDATION_REASONS, type CelProgram, type CelValidation, type CelVariable, type ValidationReason } from './validation-program.js';
import type { Environment } from '@marcbachmann/cel-js';

const CEL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REASONS = Object.keys(VALIDATION_REASONS) as ValidationReason[];

/** Compiles the expression in `field`; reports where it is and what is wrong with it. */
export function readExpression(field: YamlField, env: Environment, expected: ExpectedType): CompiledExpression | undefined {
  const source = field.text();
  if (source === undefined) return undefined;
  const result = compileExpression(env, source, expected);
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

function readVariable(item: YamlField, env: Environment, known: Set<string>): CelVariable | undefined {
  const fields = item.map(['name', 'expression']);
  if (!fields) return undefined;
  const name = required(fields, 'name', item, (f) => f.text(), 'a CEL identifier, read as variables.<name>');
  if (name !== undefined && !CEL_IDENTIFIER.test(name)) fields.get('name')?.report(`"${name}" is not a CEL identifier (letters, digits and "_", not starting with a digit)`);
  else if (name !== undefined && known.has(name)) fields.get('name')?.report(`duplicate variable name "${name}"`);
  const expressionField = fields.get('expression');
  const expression = required(fields, 'expression', item, (f) => readExpression(f, env, 'any'), 'a CEL expression');
  const namesOk = expression && expressionField ? checkVariableNames(expressionField, expression, known) : false;
  if (name !== undefined) known.add(name);
  return name !== undefined && expression && namesOk && CEL_IDENTIFIER.test(name) ? { name, expression } : undefined;
}

function readValidation(item: YamlField, env: Environment, known: ReadonlySet<string>): CelValidation | undefined {
  const fields = item.map(['expression', 'message', 'messageExpression', 'reason']);
  if (!fields) return undefined;
  const expressionField = fields.get('expression');
  const expression = required(fields, 'expression', item, (f) => readExpression(f, env, 'bool'), 'a CEL expression that is true when the object is allowed');
  const message = optional(fields, 'message', (f) => f.text(), undefined);
  const messageField = fields.get('messageExpression');
  const messageExpression = messageField ? readExpression(messageField, env, 'string') : undefined;
  const reason = optional(fields, 'reason', (f) => f.oneOf(REASONS), undefined);
  let ok = expression !== undefined && (!messageField || messageExpression !== undefined);
  if (expression && expressionField) ok = checkVariableNames(expressionField, expression, known) && ok;
  if (messageExpression && messageField) ok = checkVariableNames(messageField, messageExpression, known) && ok;
  if (!ok || !expression || (fields.has('reason') && !reason) || (fields.has('message') && message === undefined)) return undefined;
  const validation: CelValidation = { expression };
  if (message !== undefined) validation.message = message;
  if (messageExpression) validation.messageExpression = messageExpression;
  if (reason) validation.reason = reason;
  return validation;
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

/** A cel entry's variables, validations and params; undefined after reporting every problem. */
export function readCelProgram(fields: Map<string, YamlField>, entry: YamlField): ReadCelProgram | undefined {
  const env = environmentWith(VALIDATION_VARIABLES);
  const known = new Set<string>();
  const variablesField = fields.get('variables');
  const variableItems = variablesField ? variablesField.list() : [];
  const variables = (variableItems ?? []).map((item) => readVariable(item, env, known));
  const validationItems = required(fields, 'validations', entry, (f) => f.list(), 'a list of { expression, message, messageExpression, reason }');
  if (validationItems && validationItems.length === 0) fields.get('validations')?.report('must list at least one validation');
  const validations = (validationItems ?? []).map((item) => readValidation(item, env, known));
  if (!validationItems || validationItems.length === 0) return undefined;
  if (!variableItems) return undefined;
  if (!variables.every((v) => v !== undefined) || !validations.every((v) => v !== undefined)) return undefined;
  const program: CelProgram = { variables: variables as CelVariable[], validations: validations as CelValidation[], params: paramsOf(fields.get('params')) };
  const reads = new Set<string>();
  for (const expression of [...program.variables.map((v) => v.expression), ...program.validations.flatMap((v) => [v.expression, v.messageExpression ?? v.expression])]) {
    for (const name of expression.reads) reads.add(name);
  }
  return { program, reads };
}
