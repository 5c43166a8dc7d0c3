/** ValidateObjectMeta, the part every resource shares: name shape, labels, annotations. */
import { invalidValue, required, type FieldError } from './field-errors.js';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';
import type { ObjectMeta } from './objects.js';

export type NameRule = 'subdomain' | 'label';

export function validateObjectMeta(meta: ObjectMeta, nameRule: NameRule): FieldError[] {
  const errors: FieldError[] = [];
  const name = meta.name ?? '';
  if (name === '') {
    errors.push(required('metadata.name', 'name or generateName is required'));
  } else {
    const check = nameRule === 'label' ? isDns1123Label : isDns1123Subdomain;
    for (const message of check(name)) errors.push(invalidValue('metadata.name', name, message));
  }
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const message of isQualifiedName(key)) errors.push(invalidValue('metadata.labels', key, message));
    for (const message of isValidLabelValue(String(value))) errors.push(invalidValue('metadata.labels', value, message));
  }
  for (const key of Object.keys(meta.annotations ?? {})) {
    for (const message of isQualifiedName(key.toLowerCase())) {
      errors.push(invalidValue('metadata.annotations', key, message));
    }
  }
  return errors;
}
