/**
 * Translates Kubernetes' hand-written defaulters (pkg/apis/<group>/<version>/defaults.go,
 * `func SetDefaults_<Type>(obj *pkg.Type)`) into the data that src/kube/evaluation/kube-defaults applies.
 * It understands the shapes those functions are written in (field tests against nil, "", 0 or a
 * constant, assignments of literals, constants, pointers to them and composite literals, aliases
 * of fields, loops over a list, feature gates) and nothing else: a statement it cannot read is
 * left out whole, with its first line, so the data never holds half of a rule.
 */
import type { Cond, DefaulterOp, FieldSchema, JsonValue, SchemaTypes } from '../../src/kube/evaluation/kube-defaults/schema-types.js';

type Token = { kind: 'id' | 'str' | 'num' | 'op'; text: string; line: number };

const OPS = ['&&', '||', '==', '!=', ':=', '...', '<=', '>=', '++', '--', '{', '}', '(', ')', '[', ']', '.', ',', ';', '=', '&', '*', '!', '<', '>', ':', '+', '-'];

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  // Go inserts semicolons at line ends after these; the parser needs them to split statements.
  const endsStatement = (t: Token | undefined): boolean => !!t && (t.kind !== 'op' || [')', ']', '}', '++', '--'].includes(t.text));
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      if (endsStatement(tokens.at(-1))) tokens.push({ kind: 'op', text: ';', line });
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (source.startsWith('//', i)) i = source.indexOf('\n', i) === -1 ? source.length : source.indexOf('\n', i);
    else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      line += (source.slice(i, end).match(/\n/g) ?? []).length;
      i = end + 2;
    } else if (c === '"' || c === '`') {
      let j = i + 1;
      while (source[j] !== c) j += source[j] === '\\' && c === '"' ? 2 : 1;
      tokens.push({ kind: 'str', text: c === '"' ? (JSON.parse(source.slice(i, j + 1)) as string) : source.slice(i + 1, j), line });
      i = j + 1;
    } else if (/[0-9]/.test(c)) {
      const m = /^(0[xX][0-9a-fA-F]+|[0-9]+)/.exec(source.slice(i))!;
      tokens.push({ kind: 'num', text: m[0], line });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!;
      tokens.push({ kind: 'id', text: m[0], line });
      i += m[0].length;
    } else {
      const op = OPS.find((o) => source.startsWith(o, i));
      if (!op) throw new Error(`line ${line}: unexpected character ${c}`);
      tokens.push({ kind: 'op', text: op, line });
      i += op.length;
    }
  }
  return tokens;
}

/** Go expressions, as far as defaulters write them. */
export type Expr =
  | { e: 'id'; name: string }
  | { e: 'sel'; of: Expr; name: string }
  | { e: 'index'; of: Expr; index: Expr }
  | { e: 'call'; fn: Expr; args: Expr[] }
  | { e: 'lit'; value: string | number | boolean }
  | { e: 'unary'; op: string; of: Expr }
  | { e: 'binary'; op: string; left: Expr; right: Expr }
  | { e: 'composite'; type: Expr | null; fields: Array<{ key?: string; value: Expr }> };

export type Stmt =
  | { s: 'if'; cond: Expr; then: Stmt[]; else?: Stmt[]; line: number; text: string }
  | { s: 'for'; key?: string; value?: string; over: Expr; body: Stmt[]; line: number; text: string }
  | { s: 'define'; names: string[]; value: Expr; line: number; text: string }
  | { s: 'assign'; target: Expr; value: Expr; line: number; text: string }
  | { s: 'other'; line: number; text: string };

export interface GoFunction {
  name: string;
  param: string;
  /** The parameter's type: package alias and type name. */
  type: { pkg: string; name: string };
  body: Stmt[];
}

class Parser {
  #i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly lines: string[],
  ) {}

  peek(offset = 0): Token | undefined {
    return this.tokens[this.#i + offset];
  }
  next(): Token {
    const t = this.tokens[this.#i++];
    if (!t) throw new Error('unexpected end of file');
    return t;
  }
  is(text: string): boolean {
    return this.peek()?.text === text && this.peek()?.kind !== 'str';
  }
  expect(text: string): Token {
    const t = this.next();
    if (t.text !== text) throw new Error(`line ${t.line}: expected ${text}, found ${t.text}`);
    return t;
  }
  skipSemis(): void {
    while (this.is(';')) this.next();
  }
  lineText(line: number): string {
    return (this.lines[line - 1] ?? '').trim();
  }

  functions(): GoFunction[] {
    const found: GoFunction[] = [];
    while (this.peek()) {
      if (this.is('func') && this.peek(1)?.kind === 'id' && this.peek(2)?.text === '(') {
        this.next();
        const name = this.next().text;
        this.expect('(');
        const params: Token[] = [];
        while (!this.is(')')) params.push(this.next());
        this.expect(')');
        while (!this.is('{')) this.next();
        const body = this.block();
        const [param, star, pkg, dot, type] = params;
        if (param && star?.text === '*' && pkg && dot?.text === '.' && type && params.length === 5) {
          found.push({ name, param: param.text, type: { pkg: pkg.text, name: type.text }, body });
        }
      } else this.next();
    }
    return found;
  }

  block(): Stmt[] {
    this.expect('{');
    const stmts: Stmt[] = [];
    this.skipSemis();
    while (!this.is('}')) {
      stmts.push(this.statement());
      this.skipSemis();
    }
    this.expect('}');
    return stmts;
  }

  /** Skips to the end of a statement it does not model, keeping braces balanced. */
  skipStatement(line: number): Stmt {
    let depth = 0;
    while (this.peek() && !(depth === 0 && (this.is(';') || this.is('}')))) {
      const t = this.next();
      if (t.text === '{' || t.text === '(' || t.text === '[') depth++;
      if (t.text === '}' || t.text === ')' || t.text === ']') depth--;
    }
    return { s: 'other', line, text: this.lineText(line) };
  }

  statement(): Stmt {
    const start = this.#i;
    const line = this.peek()!.line;
    const text = this.lineText(line);
    try {
      if (this.is('if')) {
        this.next();
        const cond = this.expression(true);
        const then = this.block();
        if (this.is('else')) {
          this.next();
          const otherwise = this.is('if') ? [this.statement()] : this.block();
          return { s: 'if', cond, then, else: otherwise, line, text };
        }
        return { s: 'if', cond, then, line, text };
      }
      if (this.is('for')) {
        this.next();
        const names: string[] = [];
        while (!this.is(':=')) {
          const t = this.next();
          if (t.kind === 'id') names.push(t.text);
        }
        this.expect(':=');
        this.expect('range');
        const over = this.expression(true);
        const body = this.block();
        return { s: 'for', ...(names[0] !== undefined ? { key: names[0] } : {}), ...(names[1] !== undefined ? { value: names[1] } : {}), over, body, line, text };
      }
      if (this.peek()?.kind === 'id' && ['const', 'var', 'return', 'continue', 'break'].includes(this.peek()!.text)) return this.skipStatement(line);
      const left = this.expressionList();
      if (this.is(':=')) {
        this.next();
        const value = this.expression(false);
        const names = left.map((e) => (e.e === 'id' ? e.name : '?'));
        return { s: 'define', names, value, line, text };
      }
      if (this.is('=')) {
        this.next();
        const value = this.expression(false);
        if (left.length !== 1) return { s: 'other', line, text };
        return { s: 'assign', target: left[0]!, value, line, text };
      }
      return this.skipStatement(line);
    } catch {
      this.#i = start;
      return this.skipStatement(line);
    }
  }

  expressionList(): Expr[] {
    const list = [this.expression(false)];
    while (this.is(',')) {
      this.next();
      list.push(this.expression(false));
    }
    return list;
  }

  /** `noComposite`: in an if or for header a `{` opens the block, not a composite literal. */
  expression(noComposite: boolean, precedence = 0): Expr {
    const levels = [['||'], ['&&'], ['==', '!=', '<', '>', '<=', '>=']];
    let left = this.unary(noComposite);
    for (;;) {
      const op = this.peek();
      const level = levels.findIndex((ops) => op?.kind === 'op' && ops.includes(op.text));
      if (level < 0 || level < precedence) return left;
      this.next();
      const right = this.expression(noComposite, level + 1);
      left = { e: 'binary', op: op!.text, left, right };
    }
  }

  unary(noComposite: boolean): Expr {
    if (this.is('&') || this.is('*') || this.is('!') || this.is('-')) {
      const op = this.next().text;
      return { e: 'unary', op, of: this.unary(noComposite) };
    }
    return this.postfix(noComposite);
  }

  postfix(noComposite: boolean): Expr {
    let expr = this.primary(noComposite);
    for (;;) {
      if (this.is('.')) {
        this.next();
        expr = { e: 'sel', of: expr, name: this.next().text };
      } else if (this.is('[')) {
        this.next();
        const index = this.expression(false);
        this.expect(']');
        expr = { e: 'index', of: expr, index };
      } else if (this.is('(')) {
        this.next();
        const args: Expr[] = [];
        while (!this.is(')')) {
          args.push(this.expression(false));
          if (this.is(',')) this.next();
          this.skipSemis();
        }
        this.expect(')');
        expr = { e: 'call', fn: expr, args };
      } else if (this.is('{') && !noComposite) {
        expr = this.composite(expr);
      } else return expr;
    }
  }

  composite(type: Expr | null): Expr {
    this.expect('{');
    const fields: Array<{ key?: string; value: Expr }> = [];
    this.skipSemis();
    while (!this.is('}')) {
      if (this.peek()?.kind === 'id' && this.peek(1)?.text === ':') {
        const key = this.next().text;
        this.next();
        fields.push({ key, value: this.expression(false) });
      } else fields.push({ value: this.is('{') ? this.composite(null) : this.expression(false) });
      if (this.is(',')) this.next();
      this.skipSemis();
    }
    this.expect('}');
    return { e: 'composite', type, fields };
  }

  primary(noComposite: boolean): Expr {
    const t = this.next();
    if (t.kind === 'str') return { e: 'lit', value: t.text };
    if (t.kind === 'num') return { e: 'lit', value: Number(t.text.startsWith('0') && t.text.length > 1 && !/^0[xX]/.test(t.text) ? parseInt(t.text, 8) : Number(t.text)) };
    if (t.kind === 'id' && (t.text === 'true' || t.text === 'false')) return { e: 'lit', value: t.text === 'true' };
    if (t.text === '(') {
      const inner = this.expression(false);
      this.expect(')');
      return inner;
    }
    if (t.text === '[') {
      // A slice or map type: []T or map[K]V, then its literal.
      this.expect(']');
      const elem = this.postfix(true);
      return this.is('{') && !noComposite ? this.composite(elem) : elem;
    }
    if (t.text === 'map' && this.is('[')) {
      this.next();
      this.expression(false);
      this.expect(']');
      const value = this.postfix(true);
      return this.is('{') && !noComposite ? this.composite({ e: 'id', name: 'map' }) : value;
    }
    if (t.kind === 'id') return { e: 'id', name: t.text };
    throw new Error(`line ${t.line}: unexpected ${t.text}`);
  }
}

export function parseGoFunctions(source: string): GoFunction[] {
  return new Parser(tokenize(source), source.split('\n')).functions();
}

/** A statement the translation left out, and why. */
export interface Untranslated {
  function: string;
  line: number;
  statement: string;
  reason: string;
}

class Unsupported extends Error {}

export interface TranslateContext {
  types: SchemaTypes;
  /** OpenAPI definition name of a Go type: `${pkg alias}.${name}` resolved by the caller. */
  definitionOf(pkg: string, name: string): string | undefined;
  /** The value of a constant `pkg.Name` of k8s.io/api, or undefined. */
  constant(pkg: string, name: string): JsonValue | undefined;
  featureGateOn(name: string): boolean | undefined;
  gatesSeen: Map<string, boolean>;
}

type Place = { root: 'obj' | 'elem'; path: string[]; definition: string | undefined };

interface Scope {
  aliases: Map<string, Place>;
  values: Map<string, JsonValue>;
  /** Inside a loop: the loop's list and its index variable. */
  loop?: { over: Place; index: string };
}

function fieldOf(types: SchemaTypes, definition: string | undefined, goName: string): { json: string; schema: FieldSchema } {
  const fields = definition ? types[definition]?.f : undefined;
  if (!fields) throw new Unsupported(`no schema for ${definition ?? '?'} to find ${goName}`);
  const lower = goName.toLowerCase();
  for (const [json, schema] of Object.entries(fields)) if (json.toLowerCase() === lower) return { json, schema };
  throw new Unsupported(`${definition} has no field ${goName}`);
}

class Translator {
  constructor(
    private readonly ctx: TranslateContext,
    private readonly fn: GoFunction,
    private readonly definition: string,
  ) {}

  place(expr: Expr, scope: Scope): Place {
    if (expr.e === 'id') {
      if (expr.name === this.fn.param) return { root: 'obj', path: [], definition: this.definition };
      const alias = scope.aliases.get(expr.name);
      if (alias) return alias;
      throw new Unsupported(`${expr.name} is not a field`);
    }
    if (expr.e === 'unary' && (expr.op === '*' || expr.op === '&')) return this.place(expr.of, scope);
    if (expr.e === 'sel') {
      const base = this.place(expr.of, scope);
      // Embedded ObjectMeta: obj.Name and obj.Labels are metadata fields.
      const schema = base.definition ? this.ctx.types[base.definition]?.f : undefined;
      if (schema && !Object.keys(schema).some((k) => k.toLowerCase() === expr.name.toLowerCase()) && schema['metadata']?.r) {
        const meta = fieldOf(this.ctx.types, schema['metadata'].r, expr.name);
        return { root: base.root, path: [...base.path, 'metadata', meta.json], definition: meta.schema.r };
      }
      const { json, schema: field } = fieldOf(this.ctx.types, base.definition, expr.name);
      return { root: base.root, path: [...base.path, json], definition: field.r ?? field.i?.r };
    }
    if (expr.e === 'index' && expr.index.e === 'sel' && expr.index.of.e === 'id') {
      // A map entry under a constant key: obj.Labels[v1.LabelMetadataName].
      const key = this.ctx.constant(expr.index.of.name, expr.index.name);
      if (typeof key === 'string') {
        const map = this.place(expr.of, scope);
        return { root: map.root, path: [...map.path, key], definition: undefined };
      }
    }
    if (expr.e === 'index' && scope.loop && expr.index.e === 'id' && expr.index.name === scope.loop.index) {
      const list = this.place(expr.of, { ...scope, loop: undefined });
      if (list.root === scope.loop.over.root && list.path.join('.') === scope.loop.over.path.join('.')) return { root: 'elem', path: [], definition: list.definition };
    }
    throw new Unsupported('an expression that is not a field path');
  }

  value(expr: Expr, scope: Scope, definition?: string): JsonValue {
    switch (expr.e) {
      case 'lit':
        return expr.value;
      case 'id': {
        if (expr.name === 'nil') return null;
        if (scope.values.has(expr.name)) return scope.values.get(expr.name)!;
        throw new Unsupported(`the value of ${expr.name}`);
      }
      case 'sel': {
        if (expr.of.e === 'id') {
          const constant = this.ctx.constant(expr.of.name, expr.name);
          if (constant !== undefined) return constant;
        }
        throw new Unsupported(`the constant ${exprText(expr)}`);
      }
      case 'unary':
        if (expr.op === '&') return this.value(expr.of, scope, definition);
        if (expr.op === '-' && typeof this.value(expr.of, scope) === 'number') return -(this.value(expr.of, scope) as number);
        throw new Unsupported(`operator ${expr.op}`);
      case 'call': {
        const fn = exprText(expr.fn);
        const arg = expr.args[0];
        if (PASS_THROUGH.test(fn) && arg && expr.args.length === 1) return this.value(arg, scope);
        if (fn === 'make' && arg) return exprText(arg).startsWith('[]') ? [] : {};
        if (fn === 'new') return null;
        throw new Unsupported(`a call of ${fn}`);
      }
      case 'composite': {
        if (expr.type && exprText(expr.type) === 'map') {
          if (expr.fields.length === 0) return {};
          throw new Unsupported('a map literal with entries');
        }
        if (expr.fields.length > 0 && expr.fields.every((f) => f.key === undefined)) return expr.fields.map((f) => this.value(f.value, scope));
        const typeDefinition = expr.type ? this.typeDefinition(expr.type) : definition;
        const object: Record<string, JsonValue> = {};
        for (const field of expr.fields) {
          const { json, schema } = fieldOf(this.ctx.types, typeDefinition, field.key ?? '?');
          object[json] = this.value(field.value, scope, schema.r);
        }
        return object;
      }
      default:
        throw new Unsupported(`the value ${exprText(expr)}`);
    }
  }

  typeDefinition(type: Expr): string | undefined {
    const t = type.e === 'unary' ? type.of : type;
    if (t.e === 'sel' && t.of.e === 'id') return this.ctx.definitionOf(t.of.name, t.name);
    return undefined;
  }

  /** A test of a field (nil, zero, a constant), or undefined when the expression is not one. */
  cond(expr: Expr, scope: Scope): Cond | boolean {
    if (expr.e === 'binary' && (expr.op === '&&' || expr.op === '||')) {
      const left = this.cond(expr.left, scope);
      const right = this.cond(expr.right, scope);
      if (expr.op === '&&') {
        if (left === false || right === false) return false;
        if (left === true) return right;
        if (right === true) return left;
        return { all: [left, right] };
      }
      if (left === true || right === true) return true;
      if (left === false) return right;
      if (right === false) return left;
      return { any: [left, right] };
    }
    if (expr.e === 'call' && exprText(expr.fn) === 'utilfeature.DefaultFeatureGate.Enabled') {
      const gate = expr.args[0] && expr.args[0].e === 'sel' ? expr.args[0].name : '?';
      const on = this.ctx.featureGateOn(gate);
      if (on === undefined) throw new Unsupported(`feature gate ${gate} of unknown state`);
      this.ctx.gatesSeen.set(gate, on);
      return on;
    }
    if (expr.e === 'unary' && expr.op === '!') {
      const inner = this.cond(expr.of, scope);
      if (typeof inner === 'boolean') return !inner;
      if ('truthy' in inner) return { zero: inner.truthy };
      throw new Unsupported('a negated test');
    }
    if (expr.e === 'sel' || expr.e === 'id') {
      // A bool field used as a test.
      const place = this.place(expr, scope);
      return { truthy: this.relative(place, scope) };
    }
    if (expr.e === 'binary' && expr.op === '>' && expr.left.e === 'call' && exprText(expr.left.fn) === 'len' && expr.left.args[0] && expr.right.e === 'lit' && expr.right.value === 0) {
      return { nonzero: this.relative(this.place(expr.left.args[0], scope), scope) };
    }
    if (expr.e === 'binary' && (expr.op === '==' || expr.op === '!=')) {
      const subject = expr.left;
      const other = expr.right;
      if (subject.e === 'call' && exprText(subject.fn) === 'len' && subject.args[0]) {
        if (other.e !== 'lit' || other.value !== 0) throw new Unsupported('a length other than 0');
        const path = this.relative(this.place(subject.args[0], scope), scope);
        return expr.op === '==' ? { zero: path } : { nonzero: path };
      }
      const path = this.relative(this.place(subject, scope), scope);
      if (other.e === 'id' && other.name === 'nil') return expr.op === '==' ? { absent: path } : { present: path };
      const value = this.value(other, scope);
      if (value === '' || value === 0 || value === false) return expr.op === '==' ? { zero: path } : { nonzero: path };
      if (expr.op === '==') return { equals: path, value };
      return { differs: path, value };
    }
    throw new Unsupported(`the test ${exprText(expr)}`);
  }

  relative(place: Place, scope: Scope): string[] {
    if (scope.loop && place.root === 'obj') throw new Unsupported('a field outside the loop inside it');
    return place.path;
  }

  statements(stmts: Stmt[], scope: Scope, out: DefaulterOp[], untranslated: Untranslated[], topLevel: boolean): void {
    for (const stmt of stmts) {
      try {
        const ops: DefaulterOp[] = [];
        this.statement(stmt, scope, ops);
        out.push(...ops);
      } catch (error) {
        if (!(error instanceof Unsupported)) throw error;
        if (!topLevel) throw error;
        // A local the rest depends on is left undefined: statements using it fail too.
        untranslated.push({ function: this.fn.name, line: stmt.line, statement: stmt.text, reason: error.message });
      }
    }
  }

  statement(stmt: Stmt, scope: Scope, out: DefaulterOp[]): void {
    switch (stmt.s) {
      case 'define': {
        const [name] = stmt.names;
        if (stmt.names.length !== 1 || !name) throw new Unsupported('several results');
        const value = stmt.value;
        if (value.e === 'unary' && value.op === '&') {
          scope.aliases.set(name, this.place(value.of, scope));
          return;
        }
        if (value.e === 'sel' && !(value.of.e === 'id' && this.ctx.constant(value.of.name, value.name) !== undefined)) {
          // A copy of a field (labels := obj.Spec.Template.Labels): only read, so an alias will do.
          scope.aliases.set(name, this.place(value, scope));
          return;
        }
        scope.values.set(name, this.value(value, scope));
        return;
      }
      case 'assign': {
        if (stmt.target.e === 'unary' && stmt.target.op === '*') {
          const path = this.relative(this.place(stmt.target.of, scope), scope);
          out.push({ set: path, value: this.value(stmt.value, scope) });
          return;
        }
        const place = this.place(stmt.target, scope);
        const path = this.relative(place, scope);
        const v = stmt.value;
        if (v.e === 'call' && exprText(v.fn) === 'new') {
          out.push({ set: path, value: null, pending: true });
          return;
        }
        const source = passedThrough(v);
        if (source.e === 'sel' || (source.e === 'id' && !scope.values.has(source.name) && source.name !== 'nil')) {
          // obj.Labels = labels, sp.TargetPort = intstr.FromInt32(sp.Port): a field copied from another.
          try {
            out.push({ copy: this.relative(this.place(source, scope), scope), to: path });
            return;
          } catch (error) {
            if (!(error instanceof Unsupported) || source.e !== 'sel') throw error;
          }
        }
        const value = this.value(v, scope, place.definition);
        out.push(value === null ? { remove: path } : { set: path, value });
        return;
      }
      case 'if': {
        const cond = this.cond(stmt.cond, scope);
        const then: DefaulterOp[] = [];
        this.statements(stmt.then, { ...scope, aliases: new Map(scope.aliases), values: new Map(scope.values) }, then, [], false);
        const otherwise: DefaulterOp[] = [];
        if (stmt.else) this.statements(stmt.else, { ...scope, aliases: new Map(scope.aliases), values: new Map(scope.values) }, otherwise, [], false);
        if (cond === true) out.push(...then);
        else if (cond === false) out.push(...otherwise);
        else out.push({ if: cond, then, ...(otherwise.length ? { else: otherwise } : {}) });
        return;
      }
      case 'for': {
        if (stmt.value !== undefined || !stmt.key) throw new Unsupported('a loop over values');
        const over = this.place(stmt.over, scope);
        if (scope.loop) throw new Unsupported('a loop in a loop');
        const body: DefaulterOp[] = [];
        const inner: Scope = { aliases: new Map(), values: new Map(scope.values), loop: { over, index: stmt.key } };
        this.statements(stmt.body, inner, body, [], false);
        out.push({ each: over.path, do: body });
        return;
      }
      default:
        throw new Unsupported('a statement of another kind');
    }
  }

  translate(untranslated: Untranslated[]): DefaulterOp[] {
    const ops: DefaulterOp[] = [];
    this.statements(this.fn.body, { aliases: new Map(), values: new Map() }, ops, untranslated, true);
    return resolvePending(ops);
  }
}

/** `x = new(T)` then `*x = v`: one set. */
function resolvePending(ops: DefaulterOp[]): DefaulterOp[] {
  const result: DefaulterOp[] = [];
  for (const op of ops) {
    if ('if' in op) result.push({ ...op, then: resolvePending(op.then), ...(op.else ? { else: resolvePending(op.else) } : {}) });
    else if ('each' in op) result.push({ ...op, do: resolvePending(op.do) });
    else if ('set' in op && !op.pending) {
      const pendingAt = result.findIndex((r) => 'set' in r && r.pending && r.set.join('.') === op.set.join('.'));
      if (pendingAt >= 0) result.splice(pendingAt, 1);
      result.push(op);
    } else result.push(op);
  }
  if (result.some((r) => 'set' in r && r.pending)) throw new Error('new(T) without a value');
  return result;
}

const PASS_THROUGH = /^(int|int32|int64|string|bool|ptr\.To|utilpointer\.\w+Ptr|pointer\.\w+Ptr|intstr\.FromString|intstr\.FromInt|intstr\.FromInt32)$/;

/** The argument of a conversion or pointer helper (`int64(x)`, `ptr.To(x)`, `intstr.FromInt32(x)`), or the expression itself. */
function passedThrough(expr: Expr): Expr {
  if (expr.e === 'call' && expr.args.length === 1 && PASS_THROUGH.test(exprText(expr.fn))) return passedThrough(expr.args[0]!);
  return expr;
}

export function exprText(expr: Expr): string {
  switch (expr.e) {
    case 'id':
      return expr.name;
    case 'sel':
      return `${exprText(expr.of)}.${expr.name}`;
    case 'index':
      return `${exprText(expr.of)}[${exprText(expr.index)}]`;
    case 'call':
      return `${exprText(expr.fn)}(${expr.args.map(exprText).join(', ')})`;
    case 'lit':
      return JSON.stringify(expr.value);
    case 'unary':
      return `${expr.op}${exprText(expr.of)}`;
    case 'binary':
      return `${exprText(expr.left)} ${expr.op} ${exprText(expr.right)}`;
    case 'composite':
      return `${expr.type ? exprText(expr.type) : ''}{...}`;
  }
}

export function translateDefaulter(ctx: TranslateContext, fn: GoFunction, definition: string, untranslated: Untranslated[]): DefaulterOp[] {
  return new Translator(ctx, fn, definition).translate(untranslated);
}
