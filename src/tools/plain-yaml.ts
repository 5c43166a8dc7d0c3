/**
 * The YAML that the `yaml` package's stringify() writes for an object, made directly for the
 * common shape of a decoded Kubernetes object, so that evaluate's text report, which diffs every
 * patched object as YAML, does not spend most of its time in stringify() (BENCHMARKS.md, "The tools").
 * Only what is known to come out identically is written here: plain maps and lists, each
 * reached once (stringify() would anchor a repeated one), safe integers, booleans, nulls, and
 * strings of a restricted alphabet that stringify() writes plain or in plain double quotes. For
 * anything else plainYaml() answers undefined and the caller uses stringify(), so the report is
 * byte for byte what it was; test/tools-plain-yaml.test.ts holds the two equal.
 */

/** Thrown inside plainYaml() when the value has something only stringify() writes right. */
class NotPlain extends Error {}

/** Indentation of each level (stringify()'s default `indent: 2`; lists inside maps are indented too). */
const STEP = '  ';

/**
 * Strings stringify() may write plain: no spaces or quotes, no indicator character first (`-` may
 * start one: "-x" is plain, "-" alone and "- x" are not), none of `#`, `,`, brackets. Those that
 * read as another type (below) are double-quoted instead.
 */
const PLAIN_CANDIDATE = /^[A-Za-z0-9_./-][A-Za-z0-9_./:@=+-]*$/;

/** The core schema's implicit types (yaml's schema/core): a string matching one is quoted, not plain. */
const NOT_A_STRING = [
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  /^(?:~|[Nn]ull|NULL)?$/,
];
/** NOT_A_STRING as one expression: one test per string instead of eight. */
const ANY_OTHER_TYPE = new RegExp(NOT_A_STRING.map((type) => `(?:${type.source})`).join('|'));

/**
 * Past these lengths stringify() may fold a double-quoted value (at its line width of 80, with a
 * backslash) or write a key as an explicit `? key`: left to it. Plain values here have no space
 * to fold at, and keys are never folded.
 */
const MAX_QUOTED_LINE = 60;
const MAX_KEY = 200;

function yamlString(text: string, isKey: boolean): string {
  if (text === '' && !isKey) return '""';
  if (isKey && text.length > MAX_KEY) throw new NotPlain();
  // `:` last reads as a mapping; `---` and `...` first as document markers.
  if (!PLAIN_CANDIDATE.test(text) || text.endsWith(':') || text.startsWith('---') || text.startsWith('...') || text === '-') throw new NotPlain();
  if (!ANY_OTHER_TYPE.test(text)) return text;
  // The alphabet above needs no escapes: JSON's and YAML's double quotes agree on it.
  return `"${text}"`;
}

function scalar(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && !Object.is(value, -0)) return String(value);
  if (typeof value === 'string') return yamlString(value, false);
  throw new NotPlain();
}

type Collection = Record<string, unknown> | unknown[];

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A map or list to write as a block (each reached once), or undefined for a scalar. */
function collection(value: unknown, seen: Set<object>): Collection | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (seen.has(value) || !(Array.isArray(value) || isPlainObject(value))) throw new NotPlain();
  seen.add(value);
  return value as Collection;
}

const isEmpty = (value: Collection): boolean => (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0);

function scalarLine(head: string, value: unknown): string {
  const line = `${head} ${scalar(value)}`;
  // Only a double-quoted value ends in a quote (the alphabet of plain ones has none).
  if (line.endsWith('"') && line.length > MAX_QUOTED_LINE) throw new NotPlain();
  return line;
}

/**
 * Writes `value` after `head` (`key:` or `- `): a scalar or an empty collection on the same line,
 * a list item's map or list starting on it, a map's value block on the lines below.
 */
function writeValue(head: string, value: unknown, indent: string, inList: boolean, out: string[], seen: Set<object>): void {
  if (value === undefined) throw new NotPlain();
  const block = collection(value, seen);
  if (block === undefined) out.push(scalarLine(head, value));
  else if (isEmpty(block)) out.push(`${head} ${Array.isArray(block) ? '[]' : '{}'}`);
  else if (inList) writeBlock(block, indent + STEP, out, seen, `${head} `);
  else {
    out.push(head);
    writeBlock(block, indent + STEP, out, seen);
  }
}

/** A non-empty map or list at `indent`; its first line starts with `lead` when it is a list item. */
function writeBlock(block: Collection, indent: string, out: string[], seen: Set<object>, lead?: string): void {
  // Array.from, not map: a hole is read as undefined (left to stringify()), not skipped.
  const entries: [string | undefined, unknown][] = Array.isArray(block) ? Array.from(block, (item) => [undefined, item]) : Object.keys(block).map((key) => [key, block[key]]);
  entries.forEach(([key, value], i) => {
    const prefix = i === 0 && lead !== undefined ? lead : indent;
    if (key === undefined) writeValue(`${prefix}-`, value, indent, true, out, seen);
    else writeValue(`${prefix}${yamlString(key, true)}:`, value, indent, false, out, seen);
  });
}

/** stringify(value) for the shapes described above, or undefined: then only stringify() writes it right. */
export function plainYaml(value: unknown): string | undefined {
  try {
    const seen = new Set<object>();
    const block = collection(value, seen);
    if (block === undefined || Array.isArray(block)) return undefined;
    if (isEmpty(block)) return '{}\n';
    const out: string[] = [];
    writeBlock(block, '', out, seen);
    return `${out.join('\n')}\n`;
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
}
