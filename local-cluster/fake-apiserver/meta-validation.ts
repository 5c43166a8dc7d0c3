/** ValidateObjectMeta, the part every resource shares: name shape, labels, annotations. */
import { invalidValue, required, tooLongField, type FieldError } from './field-errors.js';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';
import type { ObjectMeta } from './objects.js';

export type NameRule = 'subdomain' | 'label';

/** TotalAnnotationSizeLimitB: keys and values together (what a client-side `kubectl apply` of a large CRD runs into). */
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

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
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    for (const message of isQualifiedName(key.toLowerCase())) {
      errors.push(invalidValue('metadata.annotations', key, message));
    }
    annotationBytes += Buffer.byteLength(key) + Buffer.byteLength(String(value));
  }
  if (annotationBytes > ANNOTATIONS_MAX_BYTES) errors.push(tooLongField('metadata.annotations', ANNOTATIONS_MAX_BYTES));
  return errors;
}
