/**
 * The double's CEL for admission policies: @bufbuild/cel, a CEL implementation other than the
 * server's (@marcbachmann/cel-js), so that the double and the server check each other. Parsing
 * stands in for kube-apiserver's compile step at validation; evaluation takes the variables a
 * ValidatingAdmissionPolicy sees (object, oldObject, request, params, namespaceObject,
 * variables, authorizer).
 *
 * A MutatingAdmissionPolicy's expressions construct `JSONPatch{...}` and `Object{...}` /
 * `Object.spec.x{...}` values, types kube-apiserver declares for its mutating environment and
 * @bufbuild/cel (a protobuf-typed CEL) cannot be given without protobuf descriptors. The double
 * rewrites the parsed expression instead: each such construction becomes a map literal of its
 * field names (`{"op": ..., "path": ...}`), planned as any map; an `Object.a.b{...}` nested
 * directly in a field `f` of `Object.a{...}` (or in a list literal there) must be named
 * `Object.a.f`, the check kube-apiserver makes at evaluation (CheckTypeNamesMatchFieldPathNames),
 * and a mismatch is the evaluation's error. Not modelled: type checking of the fields against
 * the schema (kube-apiserver checks the names only too).
 */
import { celEnv, isCelError, isCelList, isCelMap, isCelUint, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { QUANTITY_FUNCS } from './policy-cel-quantity.js';

/** Kubernetes' CEL sees JSON integers as int: @bufbuild/cel wants bigints for int. */
export function asCelInput(value: unknown): CelInput {
  if (typeof value === 'number') return (Number.isInteger(value) ? BigInt(value) : value) as CelInput;
  if (Array.isArray(value)) return value.map(asCelInput) as CelInput;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asCelInput(v)])) as CelInput;
  }
  return (value ?? null) as CelInput;
}

/** The parse error's text, or undefined when the expression compiles. */
export function compileError(expression: string): string | undefined {
  try {
    parse(expression);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export type CelOutcome = { value: CelValue } | { error: string };

const ENV = celEnv({ funcs: [...strings, ...QUANTITY_FUNCS] });
const planned = new Map<string, ReturnType<typeof plan>>();

function planFor(expression: string): ReturnType<typeof plan> {
  let program = planned.get(expression);
  if (!program) {
    program = plan(ENV, parse(expression));
    planned.set(expression, program);
  }
  return program;
}

/** Evaluates `expression` with `bindings` (already CEL inputs); never throws. */
export function evaluateCel(expression: string, bindings: Record<string, CelInput>): CelOutcome {
  try {
    const result = planFor(expression)(bindings);
    if (isCelError(result)) return { error: result.message };
    return { value: result };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

type ParsedRoot = ReturnType<typeof parse>;
type Expr = ParsedRoot['expr'];

/** `Object`, `Object.spec` ... and `JSONPatch`: the types the mutating environment declares. */
const isMutationType = (name: string): boolean => name === 'JSONPatch' || name === 'Object' || name.startsWith('Object.');

function stringConst(id: bigint, value: string): Expr {
  return { $typeName: 'cel.expr.Expr', id, exprKind: { case: 'constExpr', value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value } } } } as Expr;
}

/** Rewrites the mutation types' constructions in place into map literals; returns the name mismatches found. */
function rewriteConstructions(expr: Expr | undefined, expected: string | undefined, mismatches: string[]): void {
  if (!expr) return;
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'structExpr': {
      const name = kind.value.messageName;
      if (!isMutationType(name)) {
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') rewriteConstructions(entry.keyKind.value, undefined, mismatches);
          rewriteConstructions(entry.value, undefined, mismatches);
        }
        return;
      }
      if (expected !== undefined && name.startsWith('Object') && name !== expected) mismatches.push(`${name} is not ${expected}`);
      for (const entry of kind.value.entries) {
        const field = entry.keyKind.case === 'fieldKey' ? entry.keyKind.value : undefined;
        rewriteConstructions(entry.value, field !== undefined && name.startsWith('Object') ? `${name}.${field}` : undefined, mismatches);
        if (field !== undefined) entry.keyKind = { case: 'mapKey', value: stringConst(entry.id, field) };
      }
      kind.value.messageName = '';
      return;
    }
    case 'listExpr':
      for (const element of kind.value.elements) rewriteConstructions(element, expected, mismatches);
      return;
    case 'callExpr':
      rewriteConstructions(kind.value.target, undefined, mismatches);
      for (const arg of kind.value.args) rewriteConstructions(arg, undefined, mismatches);
      return;
    case 'selectExpr':
      rewriteConstructions(kind.value.operand, undefined, mismatches);
      return;
    case 'comprehensionExpr':
      for (const part of [kind.value.iterRange, kind.value.accuInit, kind.value.loopCondition, kind.value.loopStep, kind.value.result]) rewriteConstructions(part, undefined, mismatches);
      return;
    default:
      return;
  }
}

const mutationPlans = new Map<string, { program: ReturnType<typeof plan> } | { error: string }>();

function mutationPlanFor(expression: string): { program: ReturnType<typeof plan> } | { error: string } {
  let planned = mutationPlans.get(expression);
  if (!planned) {
    const parsed = parse(expression);
    const mismatches: string[] = [];
    rewriteConstructions(parsed.expr, undefined, mismatches);
    planned = mismatches.length > 0 ? { error: `type mismatch: ${mismatches.join('; ')}` } : { program: plan(ENV, parsed) };
    mutationPlans.set(expression, planned);
  }
  return planned;
}

/** A CEL value as JSON (what kube-apiserver marshals a patch value or an apply configuration to). */
export function celToJson(value: CelValue): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (isCelUint(value)) return Number(value.value);
  if (isCelList(value)) return [...value].map(celToJson);
  if (isCelMap(value)) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(isCelUint(k) ? k.value : k), celToJson(v)]));
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') return value;
  throw new Error(`a value of type ${typeof value} cannot be marshalled to JSON`);
}

/** Evaluates a mutation's expression (JSONPatch or ApplyConfiguration) to JSON; never throws. */
export function evaluateMutation(expression: string, bindings: Record<string, CelInput>): { value: unknown } | { error: string } {
  try {
    const planned = mutationPlanFor(expression);
    if ('error' in planned) return planned;
    const result = planned.program(bindings);
    if (isCelError(result)) return { error: result.message };
    return { value: celToJson(result) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
