/** metav1.LabelSelector: validation (ValidateLabelSelector) and matching. */
import { forbiddenField, invalidValue, required, type FieldError } from './field-errors.js';
import { isQualifiedName, isValidLabelValue } from './names.js';

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface SelectorValidationOptions {
  /** Ratcheting on update: values already invalid in the old object are tolerated. */
  allowInvalidLabelValue?: boolean;
}

function validateLabelKey(key: string, field: string): FieldError[] {
  return isQualifiedName(key).map((message) => invalidValue(field, key, message));
}

export function validateLabelSelector(
  selector: LabelSelector,
  field: string,
  options: SelectorValidationOptions = {},
): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    errors.push(...validateLabelKey(key, `${field}.matchLabels`));
    errors.push(...isValidLabelValue(String(value)).map((m) => invalidValue(`${field}.matchLabels`, value, m)));
  }
  (selector.matchExpressions ?? []).forEach((expression, index) => {
    const path = `${field}.matchExpressions[${index}]`;
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errors.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          errors.push(forbiddenField(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        }
        break;
      default:
        errors.push(invalidValue(`${path}.operator`, expression.operator, 'not a valid selector operator'));
    }
    errors.push(...validateLabelKey(expression.key, `${path}.key`));
    if (!options.allowInvalidLabelValue) {
      values.forEach((value, valueIndex) => {
        for (const message of isValidLabelValue(value)) {
          errors.push(invalidValue(`${path}.values[${valueIndex}]`, value, message));
        }
      });
    }
  });
  return errors;
}

export function selectorHasInvalidLabelValue(selector: LabelSelector | undefined): boolean {
  return (selector?.matchExpressions ?? []).some((e) => (e.values ?? []).some((v) => isValidLabelValue(v).length > 0));
}

export function isEmptySelector(selector: LabelSelector | undefined): boolean {
  return (
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
  );
}

function requirementMatches(requirement: LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return has && values.includes(value ?? '');
    case 'NotIn':
      return !has || !values.includes(value ?? '');
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}

/** An empty selector matches everything. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((requirement) => requirementMatches(requirement, labels));
}

/**
 * The `labelSelector` query parameter: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x)`.
 * Returns undefined when the text cannot be parsed.
 */
export function parseSelectorQuery(text: string): LabelSelector | undefined {
  const expressions: LabelSelectorRequirement[] = [];
  const parts = text.match(/([^,(]+(\([^)]*\))?)/g) ?? [];
  for (const raw of parts) {
    const part = raw.trim();
    if (part === '') continue;
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const values = (m[3] ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');
      expressions.push({ key: m[1] ?? '', operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = part.match(/^([^\s!=]+)\s*!=\s*(\S*)$/))) {
      expressions.push({ key: m[1] ?? '', operator: 'NotIn', values: [m[2] ?? ''] });
    } else if ((m = part.match(/^([^\s!=]+)\s*==?\s*(\S*)$/))) {
      expressions.push({ key: m[1] ?? '', operator: 'In', values: [m[2] ?? ''] });
    } else if ((m = part.match(/^!([^\s!=]+)$/))) {
      expressions.push({ key: m[1] ?? '', operator: 'DoesNotExist' });
    } else if ((m = part.match(/^([^\s!=]+)$/))) {
      expressions.push({ key: m[1] ?? '', operator: 'Exists' });
    } else {
      return undefined;
    }
  }
  return { matchExpressions: expressions };
}
