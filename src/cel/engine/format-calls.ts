/**
 * cel-go's string format validator (ext/formatting.go, stringFormatValidator), which ext.Strings
 * installs from version 1 on (Kubernetes 1.29): a `format()` call on a literal format string with
 * a list literal of arguments is checked after type checking, so a clause without an argument, an
 * argument without a clause, an unknown clause or an argument of the wrong type is a compile error,
 * not an error on every request. Messages are cel-go's.
 */
import type { AstNode, CelType } from './internals.js';

export interface FormatProblem {
  message: string;
  node: AstNode;
}

type Clause = 's' | 'd' | 'f' | 'e' | 'b' | 'x' | 'X' | 'o';

/** The kinds each clause takes (cel-go's verifyTypeOneOf compares kinds, not parameters). */
const ACCEPTS: Record<Exclude<Clause, 's'>, { kinds: readonly string[]; what: string }> = {
  d: { kinds: ['int', 'uint'], what: 'decimal clause can only be used on integers' },
  f: { kinds: ['double', 'string'], what: 'fixed-point clause can only be used on doubles' },
  e: { kinds: ['double', 'string'], what: 'scientific clause can only be used on doubles' },
  b: { kinds: ['int', 'uint', 'bool'], what: 'only integers and bools can be formatted as binary' },
  x: { kinds: ['int', 'uint', 'string', 'bytes'], what: 'only integers, byte buffers, and strings can be formatted as hex' },
  X: { kinds: ['int', 'uint', 'string', 'bytes'], what: 'only integers, byte buffers, and strings can be formatted as hex' },
  o: { kinds: ['int', 'uint'], what: 'octal clause can only be used on integers' },
};
const STRING_KINDS = ['list', 'map', 'int', 'uint', 'double', 'bool', 'string', 'google.protobuf.Timestamp', 'bytes', 'google.protobuf.Duration', 'type', 'null_type'];
const STRING_CLAUSE = 'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps';

/** A type as cel-go's TypeName() prints it: `list`, `map`, `int`, `net.IP`, ... */
function kindOf(type: CelType | undefined): string {
  if (!type || type.kind === 'dyn') return 'dyn';
  return type.name === 'null' ? 'null_type' : type.name.replace(/<.*$/s, '');
}

class ClauseError extends Error {
  constructor(
    message: string,
    readonly node?: AstNode,
  ) {
    super(message);
  }
}

/** verifyString: any printable kind; list and map literals element by element. */
function checkString(arg: AstNode): void {
  const kind = kindOf(arg.checkedType);
  if (kind !== 'dyn' && !STRING_KINDS.includes(kind)) throw new ClauseError(`error during formatting: ${STRING_CLAUSE}, was given ${kind}`, arg);
  if (arg.op === 'list') for (const element of arg.args as AstNode[]) checkString(element);
  if (arg.op === 'map') for (const entry of arg.args as [AstNode, AstNode][]) entry.forEach(checkString);
}

function checkArgument(clause: Clause, arg: AstNode): void {
  if (clause === 's') return checkString(arg);
  const kind = kindOf(arg.checkedType);
  const { kinds, what } = ACCEPTS[clause];
  if (kind !== 'dyn' && !kinds.includes(kind)) throw new ClauseError(`error during formatting: ${what}, was given ${kind}`, arg);
}

/** The clause at `format[at]` (just after its `%`): how many characters it takes and its verb. */
function readClause(format: string, at: number): { length: number; clause: Clause } {
  let i = at;
  if (format[i] === '.') {
    i++;
    const digits = /^[0-9]*/.exec(format.slice(i))![0];
    i += digits.length;
    if (i >= format.length) throw new ClauseError('could not parse formatting clause: error while parsing precision: could not find end of precision specifier');
    if (digits === '') throw new ClauseError('could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax');
  }
  const verb = format[i]!;
  if (!'sdfebxXo'.includes(verb)) throw new ClauseError(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
  return { length: i + 1 - at, clause: verb as Clause };
}

/** Walks the format string as cel-go's parseFormatString does, checking each clause's argument; returns how many it used. */
function checkClauses(format: string, args: readonly AstNode[]): number {
  let used = 0;
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') continue;
    if (format[i + 1] === '%') {
      i++;
      continue;
    }
    const index = used++;
    if (i + 1 >= format.length) throw new ClauseError('unexpected end of string');
    if (index >= args.length) throw new ClauseError(`index ${index} out of range`);
    const { length, clause } = readClause(format, i + 1);
    checkArgument(clause, args[index]!);
    i += length;
  }
  return used;
}

/** `'<literal>'.format([<list literal>])`: the calls cel-go's validator checks. */
function formatCall(node: AstNode): { format: string; args: AstNode[] } | undefined {
  if (node.op !== 'rcall') return undefined;
  const [name, target, args] = node.args as [string, AstNode, AstNode[]];
  if (name !== 'format' || target.op !== 'value' || typeof target.args !== 'string' || args.length !== 1 || args[0]!.op !== 'list') return undefined;
  const elements = args[0]!.args as AstNode[];
  // An optional entry may be left out at runtime: which clause takes which argument is not known here.
  return elements.some((e) => e.op === 'optionalEntry') ? undefined : { format: target.args, args: elements };
}

/** The problem cel-go's validator reports for `node`, when it is a checked format call. */
export function formatCallProblem(node: AstNode): FormatProblem | undefined {
  const call = formatCall(node);
  if (!call) return undefined;
  try {
    const used = checkClauses(call.format, call.args);
    if (call.args.length > used) return { message: `too many arguments supplied to string.format (expected ${used}, got ${call.args.length})`, node };
  } catch (error) {
    if (!(error instanceof ClauseError)) throw error;
    return { message: error.message, node: error.node ?? node };
  }
  return undefined;
}
