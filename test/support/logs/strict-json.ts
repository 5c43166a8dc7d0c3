/**
 * JSON (RFC 8259) read the way a log pipeline needs it read: an object that names a key twice is
 * refused. JSON.parse keeps the last of the two, jq and Loki keep one, so a line that repeats a
 * key loses a field somewhere. Written here, not taken from the logger, so it judges the logger.
 */

export class StrictJsonError extends Error {
  constructor(
    message: string,
    /** Where in the text it stopped (a UTF-16 index). */
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

/** The key is named twice in the object at `path` (`$`, `$.entries[0]`). */
export class DuplicateKeyError extends StrictJsonError {
  constructor(
    readonly key: string,
    readonly path: string,
    offset: number,
  ) {
    super(`key ${JSON.stringify(key)} appears twice in ${path}`, offset);
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The value `text` holds, as JSON.parse gives it; throws DuplicateKeyError for a repeated key. */
export function parseStrictJson(text: string): unknown {
  const reader = new Reader(text);
  reader.space();
  const value = reader.value('$');
  reader.space();
  if (reader.at < text.length) reader.fail('unexpected text after the value');
  return value;
}

class Reader {
  at = 0;

  constructor(readonly text: string) {}

  fail(message: string): never {
    throw new StrictJsonError(message, this.at);
  }

  space(): void {
    const { text } = this;
    while (this.at < text.length) {
      const c = text.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.at++;
    }
  }

  value(path: string): unknown {
    const c = this.text[this.at];
    if (c === '{') return this.object(path);
    if (c === '[') return this.array(path);
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.fail(c === undefined ? 'unexpected end of text' : `unexpected ${JSON.stringify(c)}`);
  }

  expect(c: string): void {
    if (this.text[this.at] !== c) this.fail(`expected ${JSON.stringify(c)}`);
    this.at++;
  }

  object(path: string): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.expect('{');
    this.space();
    if (this.text[this.at] === '}') {
      this.at++;
      return result;
    }
    for (;;) {
      const keyAt = this.at;
      if (this.text[this.at] !== '"') this.fail('expected a key');
      const key = this.string();
      if (Object.hasOwn(result, key)) throw new DuplicateKeyError(key, path, keyAt);
      this.space();
      this.expect(':');
      this.space();
      // defineProperty: a key "__proto__" is an own property, as JSON.parse makes it.
      Object.defineProperty(result, key, { value: this.value(`${path}.${key}`), enumerable: true, writable: true, configurable: true });
      this.space();
      if (this.text[this.at] === '}') {
        this.at++;
        return result;
      }
      this.expect(',');
      this.space();
    }
  }

  array(path: string): unknown[] {
    const result: unknown[] = [];
    this.expect('[');
    this.space();
    if (this.text[this.at] === ']') {
      this.at++;
      return result;
    }
    for (;;) {
      result.push(this.value(`${path}[${result.length}]`));
      this.space();
      if (this.text[this.at] === ']') {
        this.at++;
        return result;
      }
      this.expect(',');
      this.space();
    }
  }

  string(): string {
    const { text } = this;
    this.expect('"');
    let result = '';
    let runStart = this.at;
    for (;;) {
      if (this.at >= text.length) this.fail('unterminated string');
      const c = text.charCodeAt(this.at);
      if (c === 0x22) {
        result += text.slice(runStart, this.at);
        this.at++;
        return result;
      }
      if (c < 0x20) this.fail('control character in a string');
      if (c !== 0x5c) {
        this.at++;
        continue;
      }
      result += text.slice(runStart, this.at);
      const escape = text[this.at + 1] ?? '';
      if (escape === 'u') {
        const hex = text.slice(this.at + 2, this.at + 6);
        if (!HEX4.test(hex)) this.fail('invalid \\u escape');
        result += String.fromCharCode(parseInt(hex, 16));
        this.at += 6;
      } else {
        const plain = ESCAPES[escape];
        if (plain === undefined) this.fail('invalid escape');
        result += plain;
        this.at += 2;
      }
      runStart = this.at;
    }
  }

  number(): number {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (!match) return this.fail('invalid number');
    this.at += match[0].length;
    return Number(match[0]);
  }
}
