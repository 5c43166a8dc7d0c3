/**
 * The regex calls of a checked expression (matches, find, findAll): literal patterns are
 * compiled at load, so an invalid one refuses the policy file with its line instead of failing
 * every review, as kube-apiserver refuses it when the policy is written ("invalid matches
 * argument", "error parsing regexp: ..."). The base library's `string.matches` runs on
 * JavaScript's backtracking engine; its calls are routed to RE2 here, with their cost charged.
 */
import { regexCost, regexMatches, regexProblem, RegexSyntaxError } from './regular-expressions.js';
import { chargeCost } from './budget.js';
import { forEachNode, type AstNode } from './instrument.js';

const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll']);

interface CallNode extends AstNode {
  start?: number;
  handle?: (...args: unknown[]) => unknown;
}

/** The call's name and its pattern argument, for `text.f(pattern)` and `f(text, pattern)`. */
function regexCallOf(node: AstNode): { name: string; pattern: AstNode | undefined } | undefined {
  const args = node.args as unknown[];
  if (node.op === 'rcall') {
    const [name, , callArgs] = args as [string, AstNode, AstNode[]];
    return REGEX_FUNCTIONS.has(name) ? { name, pattern: callArgs[0] } : undefined;
  }
  if (node.op === 'call') {
    const [name, callArgs] = args as [string, AstNode[]];
    return name === 'matches' ? { name, pattern: callArgs[1] } : undefined;
  }
  return undefined;
}

/** The first invalid literal pattern, described with its column; undefined when every one compiles. */
export function invalidRegexLiteral(root: unknown, source: string): string | undefined {
  let problem: string | undefined;
  forEachNode(root, (node) => {
    const call = problem === undefined ? regexCallOf(node) : undefined;
    if (!call?.pattern || call.pattern.op !== 'value' || typeof call.pattern.args !== 'string') return;
    const wrong = regexProblem(call.pattern.args);
    if (wrong === undefined) return;
    const start = (call.pattern as CallNode).start;
    const where = start === undefined ? '' : source.includes('\n') ? '' : ` (at column ${start + 1})`;
    problem = `has an invalid ${call.name} argument ${JSON.stringify(call.pattern.args)}: ${wrong}${where}`;
  });
  return problem;
}

function re2Matches(text: string, pattern: string): boolean {
  chargeCost(regexCost(text, pattern));
  try {
    return regexMatches(text, pattern);
  } catch (error) {
    // cel-go's matches returns Go's error as it is.
    if (error instanceof RegexSyntaxError) throw new Error(error.message);
    throw error;
  }
}

/**
 * Routes every `text.matches(pattern)` to RE2. The node's handler receives the evaluated
 * receiver and arguments; anything but two strings goes to the library's own dispatch, which
 * reports the missing overload as before.
 */
export function routeMatchesToRe2(root: unknown): void {
  forEachNode(root, (node) => {
    const call = node as CallNode;
    if (node.op !== 'rcall' || (node.args as unknown[])[0] !== 'matches' || typeof call.handle !== 'function') return;
    const original = call.handle;
    call.handle = (values: unknown, ...rest: unknown[]) => {
      const [text, pattern] = values as unknown[];
      if (typeof text === 'string' && typeof pattern === 'string') return re2Matches(text, pattern);
      return original(values, ...rest);
    };
  });
}
