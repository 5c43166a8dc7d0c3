/**
 * Answers for `authorizer` checks during one review. CEL evaluates synchronously and a
 * SubjectAccessReview is a network call, so a review runs in rounds: every check is answered from
 * what is known (the source's cache, answers given on the command line); the first time a check is
 * not known it is recorded and answered "pending", the round's result is thrown away, the
 * recorded questions are asked together, and the rule runs again. CEL has no side effects, so the
 * last round, in which every check had its real answer, is the answer. Rounds and questions are
 * capped. A check that could not be answered (the question could not be sent, or not in time, or
 * past the caps) fails its expression, so the validation's failurePolicy decides, as for a
 * webhook kube-apiserver cannot reach; an error the authorizer itself reports is the decision's
 * (`errored()`), as in kube-apiserver.
 */
import type { AuthorizationAnswer, AuthorizationQuestion, Authorize } from './library/authorizer.js';
import { fail } from './library/errors.js';

/** A question that got no answer: why (the expression fails with it). */
export interface AskFailure {
  failed: string;
}

/** What asking one question gave: the authorizer's answer, or why it could not be asked. */
export type AskResult = AuthorizationAnswer | AskFailure;

/** Who answers authorizer checks for a policy (PolicyOptions.authorization). */
export interface AuthorizationSource {
  /**
   * An answer known without asking (cached, or given on the command line), or undefined; may
   * throw to fail the expression. `key` is the question's questionKey, when the caller has it.
   */
  known(question: AuthorizationQuestion, key?: string): AuthorizationAnswer | undefined;
  /**
   * Asks, bounded by `signal`: one result per question, in order, never rejecting (a question
   * that could not be asked is an AskFailure). Absent: nobody to ask, and a check that is not
   * known fails.
   */
  ask?(questions: readonly AuthorizationQuestion[], signal: AbortSignal): Promise<AskResult[]>;
}

/** Distinct checks one review may make: kube-apiserver's cost limit allows about 28 per policy (350,000 each of 10,000,000). */
export const MAX_QUESTIONS_PER_REVIEW = 32;
/** Rounds of asking per review: a check that depends on another's decision needs one more. */
export const MAX_ROUNDS_PER_REVIEW = 4;

const PENDING: AuthorizationAnswer = Object.freeze({ allowed: false, error: 'authorization check not answered yet' });

/** One line naming a check, for messages: `alice may create apps/deployments in team-a`. */
export function describeQuestion(question: AuthorizationQuestion): string {
  const { user, verb, path, group, resource, subresource, namespace, name } = question;
  const what = path !== undefined ? path : `${group ? `${group}/` : ''}${resource ?? ''}${subresource ? `/${subresource}` : ''}${name ? ` "${name}"` : ''}`;
  return `${user.username || '(no user)'} may ${verb} ${what}${namespace ? ` in namespace ${namespace}` : ''}`;
}

const ATTRIBUTES = ['verb', 'path', 'group', 'resource', 'subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'] as const;

/** The same question gets the same key, whatever order its fields or the user's groups were set in. */
export function questionKey(question: AuthorizationQuestion): string {
  const { user } = question;
  const groups = user.groups.length > 1 ? [...user.groups].sort() : user.groups;
  const extra = user.extra ? Object.entries(user.extra).sort(([a], [b]) => (a < b ? -1 : 1)) : [];
  return JSON.stringify([user.username, user.uid ?? '', groups, extra, ATTRIBUTES.map((key) => question[key] ?? null)]);
}

/** A check with nobody to answer it fails its expression, saying which check. */
export const nobodyToAsk: Authorize = (question) =>
  fail(`nobody to ask whether ${describeQuestion(question)} (authorizer checks are answered by kube-apiserver through a SubjectAccessReview, or by answers given to evaluate and test)`);

const answered = (result: AskResult): AuthorizationAnswer => ('failed' in result ? fail(result.failed) : result);

interface Round<T> {
  outcome: { value: T } | { error: unknown };
  missing: Map<string, AuthorizationQuestion>;
}

function runRound<T>(source: AuthorizationSource | undefined, answers: Map<string, AskResult>, last: boolean, run: (authorize: Authorize) => T): Round<T> {
  const missing = new Map<string, AuthorizationQuestion>();
  const authorize: Authorize = (question) => {
    const key = questionKey(question);
    const seen = answers.get(key);
    if (seen) return answered(seen);
    const known = source?.known(question, key);
    if (known) {
      answers.set(key, known);
      return known;
    }
    if (!source?.ask) return nobodyToAsk(question);
    if (last || answers.size + missing.size >= MAX_QUESTIONS_PER_REVIEW) {
      const capped = { failed: `too many authorizer checks in one request (at most ${MAX_QUESTIONS_PER_REVIEW} in ${MAX_ROUNDS_PER_REVIEW} rounds, each depending on the one before); ${describeQuestion(question)} was not asked` };
      answers.set(key, capped);
      return answered(capped);
    }
    missing.set(key, question);
    return PENDING;
  };
  try {
    return { outcome: { value: run(authorize) }, missing };
  } catch (error) {
    return { outcome: { error }, missing };
  }
}

function settle<T>(round: Round<T>): T {
  if ('error' in round.outcome) throw round.outcome.error;
  return round.outcome.value;
}

async function askRounds<T>(source: AuthorizationSource, first: Round<T>, answers: Map<string, AskResult>, signal: AbortSignal, run: (authorize: Authorize) => T): Promise<T> {
  let round = first;
  for (let asked = 1; round.missing.size > 0; asked++) {
    const questions = [...round.missing.values()];
    const replies = await source.ask!(questions, signal);
    questions.forEach((question, i) => answers.set(questionKey(question), replies[i] ?? { failed: `no answer to whether ${describeQuestion(question)}` }));
    round = runRound(source, answers, asked >= MAX_ROUNDS_PER_REVIEW - 1, run);
  }
  return settle(round);
}

/**
 * Runs `run` (a rule's whole evaluation) with authorizer checks answered by `source`: at once when
 * every check is known, else after asking (bounded by `signal`, the review's).
 */
export function withAuthorizationAnswers<T>(source: AuthorizationSource | undefined, signal: AbortSignal, run: (authorize: Authorize) => T): T | Promise<T> {
  const answers = new Map<string, AskResult>();
  const first = runRound(source, answers, false, run);
  if (first.missing.size === 0) return settle(first);
  return askRounds(source!, first, answers, signal, run);
}
