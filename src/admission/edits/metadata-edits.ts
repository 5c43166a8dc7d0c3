/**
 * Label and annotation edits for mutating handlers. They change the object in place and return
 * it; the server turns the difference into the JSONPatch (computePatch), so an edit that changes
 * nothing adds nothing to the patch. Keys and values are checked as kube-apiserver would: a
 * patch it refuses fails the user's request, while a handler that throws gets the failurePolicy.
 */
import { isLabelValue, isQualifiedName, LABEL_VALUE_HINT, QUALIFIED_NAME_HINT } from '../kube-names.js';

/** Anything with Kubernetes metadata: every typed object and KubeObject. */
export interface WithMetadata {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown } | undefined;
}

/** Thrown for a label or annotation kube-apiserver would refuse. */
export class InvalidMetadataError extends Error {
  override readonly name = 'InvalidMetadataError';
}

function checkKey(key: string, what: string): void {
  if (!isQualifiedName(key)) {
    throw new InvalidMetadataError(`${what} key "${key}" is not a qualified name: ${QUALIFIED_NAME_HINT}`);
  }
}

function metadataOf(object: WithMetadata): NonNullable<WithMetadata['metadata']> {
  object.metadata ??= {};
  return object.metadata;
}

/** Sets label `key` to `value` (a valid label value: up to 63 characters, alphanumeric at both ends). */
export function setLabel<T extends WithMetadata>(object: T, key: string, value: string): T {
  checkKey(key, 'label');
  if (!isLabelValue(value)) throw new InvalidMetadataError(`label value "${value}" for "${key}" is not valid: ${LABEL_VALUE_HINT}`);
  const metadata = metadataOf(object);
  metadata.labels ??= {};
  if (metadata.labels[key] !== value) metadata.labels[key] = value;
  return object;
}

/** Removes label `key` when present. */
export function removeLabel<T extends WithMetadata>(object: T, key: string): T {
  const labels = object.metadata?.labels;
  if (labels && Object.hasOwn(labels, key)) delete labels[key];
  return object;
}

/** Sets annotation `key` to `value` (any string). */
export function setAnnotation<T extends WithMetadata>(object: T, key: string, value: string): T {
  checkKey(key, 'annotation');
  const metadata = metadataOf(object);
  metadata.annotations ??= {};
  if (metadata.annotations[key] !== value) metadata.annotations[key] = value;
  return object;
}

/** Removes annotation `key` when present. */
export function removeAnnotation<T extends WithMetadata>(object: T, key: string): T {
  const annotations = object.metadata?.annotations;
  if (annotations && Object.hasOwn(annotations, key)) delete annotations[key];
  return object;
}
