/**
 * Kubernetes' format library (k8s.io/apiserver/pkg/cel/library/format.go, 1.31):
 * `format.<name>()` and `format.named(name)` give a Format; `<Format>.validate(s)` is
 * optional.none() when `s` is valid, else optional.of(the reasons), with apimachinery's texts.
 */
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { namespaceType } from './errors.js';

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?';
const NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${NAME})?`;

const LABEL_MESSAGE = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${LABEL}')`;
const SUBDOMAIN_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${SUBDOMAIN}')`;
const DNS1035_MESSAGE = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035}')`;
const NAME_MESSAGE = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${NAME}')`;
const LABEL_VALUE_MESSAGE = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`;

const whole = (pattern: string) => new RegExp(`^${pattern}$`);
const tooLong = (max: number) => `must be no more than ${max} characters`;

function checked(value: string, pattern: string, message: string, max: number): string[] {
  const problems: string[] = [];
  if (value.length > max) problems.push(tooLong(max));
  if (!whole(pattern).test(value)) problems.push(message);
  return problems;
}

/** apimachinery's maskTrailingDash, for the *Prefix formats (generateName). */
const prefix = (value: string) => (value.length > 1 && value.endsWith('-') ? `${value.slice(0, -1)}a` : value);

function qualifiedName(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const problems: string[] = [];
  if (parts.length === 2) {
    const [head = '', tail = ''] = parts;
    name = tail;
    if (head.length === 0) problems.push('prefix part must be non-empty');
    else problems.push(...checked(head, SUBDOMAIN, SUBDOMAIN_MESSAGE, 253).map((p) => `prefix part ${p}`));
  } else if (parts.length > 2) {
    return [`a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${NAME}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push(`name part ${tooLong(63)}`);
  if (name.length > 0 && !whole(NAME).test(name)) problems.push(NAME_MESSAGE);
  return problems;
}

const UUID = /^(?:[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function validDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function uri(value: string): string[] {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path.
  if (value.startsWith('/') || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value)) {
    try {
      if (!value.startsWith('/')) new URL(value);
      return [];
    } catch {
      return [`parse "${value}": invalid URI`];
    }
  }
  return [`parse "${value}": invalid URI for request`];
}

type Validate = (value: string) => string[];

export class Format {
  constructor(
    readonly name: string,
    readonly validate: Validate,
  ) {}
}

const FORMATS: Record<string, Format> = {
  dns1123Label: new Format('DNS1123Label', (v) => checked(v, LABEL, LABEL_MESSAGE, 63)),
  dns1123Subdomain: new Format('DNS1123Subdomain', (v) => checked(v, SUBDOMAIN, SUBDOMAIN_MESSAGE, 253)),
  dns1035Label: new Format('DNS1035Label', (v) => checked(v, DNS1035, DNS1035_MESSAGE, 63)),
  qualifiedName: new Format('QualifiedName', qualifiedName),
  dns1123LabelPrefix: new Format('DNS1123LabelPrefix', (v) => checked(prefix(v), LABEL, LABEL_MESSAGE, 63)),
  dns1123SubdomainPrefix: new Format('DNS1123SubdomainPrefix', (v) => checked(prefix(v), SUBDOMAIN, SUBDOMAIN_MESSAGE, 253)),
  dns1035LabelPrefix: new Format('DNS1035LabelPrefix', (v) => checked(prefix(v), DNS1035, DNS1035_MESSAGE, 63)),
  labelValue: new Format('LabelValue', (v) => checked(v, LABEL_VALUE, LABEL_VALUE_MESSAGE, 63)),
  uri: new Format('URI', uri),
  uuid: new Format('uuid', (v) => (UUID.test(v) ? [] : ['does not match the UUID format'])),
  byte: new Format('byte', (v) => (/^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v) ? [] : ['invalid base64'])),
  date: new Format('date', (v) => {
    const m = DATE.exec(v);
    return m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) ? [] : ['invalid date'];
  }),
  datetime: new Format('datetime', (v) => {
    const m = DATE_TIME.exec(v);
    return m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61 ? [] : ['invalid datetime'];
  }),
};

export const FORMAT_NAMES = Object.keys(FORMATS);

export function registerFormat(env: Environment): void {
  const { typeName, value } = namespaceType('format');
  env.registerType(typeName, value.constructor as new () => object);
  env.registerConstant('format', typeName, value);
  env.registerType('kubernetes.NamedFormat', Format);
  for (const [name, format] of Object.entries(FORMATS)) env.registerFunction(`${typeName}.${name}(): kubernetes.NamedFormat`, () => format);
  env.registerFunction(`${typeName}.named(string): optional<kubernetes.NamedFormat>`, (_: unknown, name: string) =>
    Object.hasOwn(FORMATS, name) ? Optional.of(FORMATS[name]) : Optional.none(),
  );
  env.registerFunction('kubernetes.NamedFormat.validate(string): optional<list<string>>', (format: Format, text: string) => {
    const problems = format.validate(text);
    return problems.length === 0 ? Optional.none() : Optional.of(problems);
  });
  env.registerOperator('kubernetes.NamedFormat == kubernetes.NamedFormat', (a: Format, b: Format) => a.name === b.name);
}
