/** The name and label checks of apimachinery's util/validation, with their exact messages. */

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_PART = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED_NAME_PART})?`;

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '" +
  DNS1123_SUBDOMAIN +
  "')";
const DNS1123_LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '" +
  DNS1123_LABEL +
  "')";
const DNS1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '" +
  DNS1035_LABEL +
  "')";
const QUALIFIED_NAME_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" +
  QUALIFIED_NAME_PART +
  "')";
const QUALIFIED_NAME_SHAPE_MESSAGE =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" +
  QUALIFIED_NAME_PART +
  "') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '" +
  LABEL_VALUE +
  "')";

const anchored = (pattern: string): RegExp => new RegExp(`^${pattern}$`);
const SUBDOMAIN_RE = anchored(DNS1123_SUBDOMAIN);
const DNS1123_LABEL_RE = anchored(DNS1123_LABEL);
const DNS1035_RE = anchored(DNS1035_LABEL);
const QUALIFIED_NAME_PART_RE = anchored(QUALIFIED_NAME_PART);
const LABEL_VALUE_RE = anchored(LABEL_VALUE);

const tooLong = (max: number): string => `must be no more than ${max} characters`;

export function isDns1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(tooLong(253));
  if (!SUBDOMAIN_RE.test(value)) errors.push(SUBDOMAIN_MESSAGE);
  return errors;
}

export function isDns1123Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(tooLong(63));
  if (!DNS1123_LABEL_RE.test(value)) errors.push(DNS1123_LABEL_MESSAGE);
  return errors;
}

export function isDns1035Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(tooLong(63));
  if (!DNS1035_RE.test(value)) errors.push(DNS1035_MESSAGE);
  return errors;
}

/** IsQualifiedName: `[prefix/]name`, prefix a DNS subdomain, name at most 63 characters. */
export function isQualifiedName(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const errors: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...isDns1123Subdomain(prefix).map((message) => `prefix part ${message}`));
  } else {
    return [QUALIFIED_NAME_SHAPE_MESSAGE];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push(`name part ${tooLong(63)}`);
  if (name.length > 0 && !QUALIFIED_NAME_PART_RE.test(name)) errors.push(QUALIFIED_NAME_MESSAGE);
  return errors;
}

export function isValidLabelValue(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(tooLong(63));
  if (!LABEL_VALUE_RE.test(value)) errors.push(LABEL_VALUE_MESSAGE);
  return errors;
}
