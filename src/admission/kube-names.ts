/** Kubernetes name and label syntax, as apimachinery's validation checks it. */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Namespace names, webhook path segments: lowercase alphanumerics and "-", at most 63. */
export function isDns1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

export function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** The part after the optional prefix of a qualified name (also an audit annotation key). */
export function isQualifiedNamePart(value: string): boolean {
  return value.length <= 63 && QUALIFIED_NAME_PART.test(value);
}

/** Label keys, annotation keys, matchCondition names: `[dns-subdomain/]name-part`. */
export function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length === 1) return isQualifiedNamePart(value);
  if (parts.length !== 2) return false;
  const [prefix, name] = parts as [string, string];
  return prefix.length > 0 && isDns1123Subdomain(prefix) && isQualifiedNamePart(name);
}

export function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

export const QUALIFIED_NAME_HINT =
  'an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit';
export const LABEL_VALUE_HINT =
  'at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit (or empty)';
export const DNS1123_LABEL_HINT = 'a DNS-1123 label: at most 63 lowercase letters, digits or "-", starting and ending with a letter or digit';
