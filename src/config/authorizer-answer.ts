/**
 * Answers to `authorizer` checks given to evaluate and test, where there is no kube-apiserver to
 * ask: `--authorizer-answer allowed=true,user=alice,verb=create,apiGroup=apps,resource=deployments`
 * or a YAML list of the same fields in `--authorizer-answers FILE`. The first answer whose every
 * given field matches the check answers it; a field left out matches anything.
 */

/** What an answer is for: each field, when given, must equal the check's. */
export interface AuthorizerAnswerMatch {
  /** The user's name (`system:serviceaccount:ns:name` for authorizer.serviceAccount()). */
  user?: string;
  /** A group the user is in. */
  group?: string;
  verb?: string;
  /** The API group ("" for the core group). */
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** A non-resource path (authorizer.path()). */
  path?: string;
}

/** An answer: allowed or not (no opinion and deny are both not allowed), or an authorizer error. */
export interface AuthorizerAnswer extends AuthorizerAnswerMatch {
  allowed: boolean;
  reason?: string;
  error?: string;
}

const MATCH_FIELDS = ['user', 'group', 'verb', 'apiGroup', 'resource', 'subresource', 'namespace', 'name', 'path'] as const;
const ANSWER_FIELDS = ['allowed', 'reason', 'error'] as const;
export const AUTHORIZER_ANSWER_FIELDS: readonly string[] = [...ANSWER_FIELDS, ...MATCH_FIELDS];

const BOOLEAN = new Map<unknown, boolean>([
  [true, true],
  ['true', true],
  [false, false],
  ['false', false],
]);

/** One answer from its fields (strings from the command line, or a YAML mapping); a problem names the field. */
export function readAuthorizerAnswer(fields: Readonly<Record<string, unknown>>): AuthorizerAnswer | string {
  const unknown = Object.keys(fields).filter((key) => !AUTHORIZER_ANSWER_FIELDS.includes(key));
  if (unknown.length > 0) return `unknown field ${unknown.map((k) => `"${k}"`).join(', ')}; the fields are ${AUTHORIZER_ANSWER_FIELDS.join(', ')}`;
  const allowed = fields['allowed'] === undefined ? undefined : BOOLEAN.get(fields['allowed']);
  if (fields['allowed'] !== undefined && allowed === undefined) return `allowed must be true or false, not ${JSON.stringify(fields['allowed'])}`;
  if (allowed === undefined && fields['error'] === undefined) return 'give allowed=true or allowed=false (or error=TEXT for an authorizer that fails)';
  const answer: AuthorizerAnswer = { allowed: allowed ?? false };
  for (const key of [...MATCH_FIELDS, 'reason', 'error'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') return `${key} must be a string, not ${JSON.stringify(value)}`;
    answer[key] = value;
  }
  return answer;
}

/** `allowed=true,user=alice,verb=create` (a value cannot contain a comma). */
export function parseAuthorizerAnswerFlag(text: string): AuthorizerAnswer | string {
  const fields: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) return `"${pair}" is not KEY=VALUE; e.g. allowed=true,user=alice,verb=create,apiGroup=apps,resource=deployments`;
    fields[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return readAuthorizerAnswer(fields);
}
