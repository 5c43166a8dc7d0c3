import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/** Every problem found in one file, each tied to the offset of the YAML node at fault. */
export class ProblemList {
  readonly #items: { offset: number; order: number; text: string }[] = [];

  constructor(
    readonly file: string,
    readonly lines: LineCounter,
  ) {}

  add(offset: number, text: string): void {
    this.#items.push({ offset, order: this.#items.length, text });
  }

  get size(): number {
    return this.#items.length;
  }

  /** The texts alone, in the order found (for values that never were a file). */
  messages(): string[] {
    return this.#items.map((item) => item.text);
  }

  /** `<file>:<line>:<col>: <text>`, in file order. */
  format(): string[] {
    return [...this.#items]
      .sort((a, b) => a.offset - b.offset || a.order - b.order)
      .map(({ offset, text }) => {
        const { line, col } = this.lines.linePos(offset);
        return `${this.file}:${line}:${col}: ${text}`;
      });
  }
}

function describeValue(node: Node): string {
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return node.value === null ? 'empty' : JSON.stringify(node.value);
  return 'something else';
}

/**
 * One value of the policy document with its path ("webhooks[0].timeoutSeconds") and position.
 * Readers report what is wrong and return undefined, so callers collect every problem.
 */
export class YamlField {
  constructor(
    readonly problems: ProblemList,
    readonly doc: Document,
    readonly node: Node,
    readonly path: string,
  ) {}

  get offset(): number {
    return this.node.range?.[0] ?? 0;
  }

  /** The value as plain data, aliases resolved to their anchors' values. */
  value(): unknown {
    return plainValue(this.node, this.doc);
  }

  report(message: string, offset = this.offset): void {
    this.problems.add(offset, this.path ? `${this.path}: ${message}` : message);
  }

  #child(node: Node, path: string): YamlField {
    return new YamlField(this.problems, this.doc, resolve(node, this.doc), path);
  }

  /** The pairs of a mapping with string keys (others are reported); undefined when not a mapping. */
  #pairs(): { key: string; keyOffset: number; value: Node | null }[] | undefined {
    if (!isMap(this.node)) {
      this.report(`must be a mapping, got ${describeValue(this.node)}`);
      return undefined;
    }
    const pairs: { key: string; keyOffset: number; value: Node | null }[] = [];
    for (const pair of this.node.items) {
      const keyNode = pair.key as Node | null;
      const key = isScalar(keyNode) ? keyNode.value : undefined;
      const keyOffset = keyNode?.range?.[0] ?? this.offset;
      if (typeof key === 'string') pairs.push({ key, keyOffset, value: pair.value as Node | null });
      else this.report(`keys must be strings, got ${keyNode ? describeValue(keyNode) : 'empty'} (quote it)`, keyOffset);
    }
    return pairs;
  }

  /**
   * The entries of a mapping whose keys are all in `known`; empty (null) values count as absent.
   * Unknown and non-string keys are reported.
   */
  map(known: readonly string[]): Map<string, YamlField> | undefined {
    const pairs = this.#pairs();
    if (!pairs) return undefined;
    const entries = new Map<string, YamlField>();
    for (const { key, keyOffset, value } of pairs) {
      const node = presentNode(value);
      if (!known.includes(key)) this.report(`unknown field "${key}"; valid fields: ${known.join(', ')}`, keyOffset);
      else if (node) entries.set(key, this.#child(node, this.path ? `${this.path}.${key}` : key));
    }
    return entries;
  }

  /** The entries of a free-form mapping (label maps): key text, key position, value (required). */
  entries(): { key: string; keyOffset: number; value: YamlField }[] | undefined {
    const pairs = this.#pairs();
    if (!pairs) return undefined;
    const result: { key: string; keyOffset: number; value: YamlField }[] = [];
    for (const { key, keyOffset, value } of pairs) {
      const node = presentNode(value);
      if (node) result.push({ key, keyOffset, value: this.#child(node, `${this.path}.${key}`) });
      else this.report(`"${key}" has no value; give it one (use "" for an empty string)`, keyOffset);
    }
    return result;
  }

  list(): YamlField[] | undefined {
    if (!isSeq(this.node)) {
      this.report(`must be a list, got ${describeValue(this.node)}`);
      return undefined;
    }
    return this.node.items.map((item, index) => this.#child(item as Node, `${this.path}[${index}]`));
  }

  #scalar(): unknown {
    return isScalar(this.node) ? this.node.value : undefined;
  }

  string(): string | undefined {
    const value = this.#scalar();
    if (typeof value === 'string') return value;
    this.report(`must be a string, got ${describeValue(this.node)}${typeof value === 'number' || typeof value === 'boolean' ? ' (quote it)' : ''}`);
    return undefined;
  }

  /** A string that is not empty. */
  text(): string | undefined {
    const value = this.string();
    if (value === undefined) return undefined;
    if (value.trim() === '') {
      this.report('must not be empty');
      return undefined;
    }
    return value;
  }

  boolean(): boolean | undefined {
    const value = this.#scalar();
    if (typeof value === 'boolean') return value;
    this.report(`must be true or false, got ${describeValue(this.node)}`);
    return undefined;
  }

  integer(min: number, max: number): number | undefined {
    const value = this.#scalar();
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    this.report(`must be an integer from ${min} to ${max}, got ${describeValue(this.node)}`);
    return undefined;
  }

  oneOf<T extends string>(allowed: readonly T[]): T | undefined {
    const value = this.#scalar();
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
    this.report(`must be one of ${allowed.join(', ')}, got ${describeValue(this.node)}`);
    return undefined;
  }

  /** A list of strings, each checked by `check` (which returns a problem or undefined). */
  stringList(check?: (value: string) => string | undefined): string[] | undefined {
    const items = this.list();
    if (!items) return undefined;
    const values: string[] = [];
    let ok = true;
    for (const item of items) {
      const value = item.string();
      const problem = value === undefined ? 'invalid' : check?.(value);
      if (problem && value !== undefined) item.report(problem);
      if (value === undefined || problem) ok = false;
      else values.push(value);
    }
    return ok ? values : undefined;
  }
}

/** The value node, or undefined when the value is empty (`key:` with nothing after it). */
function presentNode(value: Node | null): Node | undefined {
  return value === null || (isScalar(value) && value.value === null) ? undefined : value;
}

function plainValue(node: Node | null, doc: Document): unknown {
  if (node === null) return null;
  const resolved = resolve(node, doc);
  if (isMap(resolved)) return Object.fromEntries(resolved.items.map((pair) => [String(plainValue(pair.key as Node, doc)), plainValue(pair.value as Node | null, doc)]));
  if (isSeq(resolved)) return resolved.items.map((item) => plainValue(item as Node, doc));
  return isScalar(resolved) ? resolved.value : null;
}

function resolve(node: Node, doc: Document): Node {
  if (!isAlias(node)) return node;
  const target = node.resolve(doc);
  return (target as Node | undefined) ?? node;
}

/** Reads `field` with `read` when present; reports a missing required one at `parent`. */
export function required<T>(fields: Map<string, YamlField>, key: string, parent: YamlField, read: (field: YamlField) => T | undefined, hint: string): T | undefined {
  const field = fields.get(key);
  if (!field) {
    parent.report(`missing required field "${key}" (${hint})`);
    return undefined;
  }
  return read(field);
}

/** Reads `field` with `read` when present, else gives `fallback`; undefined only on a problem. */
export function optional<T>(fields: Map<string, YamlField>, key: string, read: (field: YamlField) => T | undefined, fallback: T): T | undefined {
  const field = fields.get(key);
  return field ? read(field) : fallback;
}
