/**
 * The answers evaluate and test give to `authorizer` checks (src/config/authorizer-answer.ts
 * says how they are written): the first given answer that matches a check answers it. A check
 * no answer matches fails its expression and is remembered: the command then stops as for bad
 * input (exit 2), naming each such check and the answer to add, rather than letting the
 * failurePolicy turn a missing answer into an allowed or denied request.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { readAuthorizerAnswer, type AuthorizerAnswer } from '../config/authorizer-answer.js';
import type { ToolOptions } from '../config/tool-args.js';
import type { AuthorizationSource } from '../cel/authorization-answers.js';
import { describeQuestion } from '../cel/authorization-answers.js';
import type { AuthorizationAnswer, AuthorizationQuestion, Authorize } from '../cel/library/authorizer.js';
import { fail } from '../cel/library/errors.js';
import { ToolInputError } from './tool-io.js';

function matches(answer: AuthorizerAnswer, question: AuthorizationQuestion): boolean {
  const { user } = question;
  const wanted: [string | undefined, string | undefined][] = [
    [answer.user, user.username],
    [answer.verb, question.verb],
    [answer.apiGroup, question.path === undefined ? (question.group ?? '') : undefined],
    [answer.resource, question.resource],
    [answer.subresource, question.subresource ?? ''],
    [answer.namespace, question.namespace ?? ''],
    [answer.name, question.name ?? ''],
    [answer.path, question.path],
  ];
  return wanted.every(([given, asked]) => given === undefined || given === asked) && (answer.group === undefined || user.groups.includes(answer.group));
}

/** The --authorizer-answer value that would answer `question`. */
function answerFor(question: AuthorizationQuestion): string {
  const fields: [string, string | undefined][] = [
    ['user', question.user.username],
    ['verb', question.verb],
    ...(question.path !== undefined
      ? ([['path', question.path]] as [string, string][])
      : ([
          ['apiGroup', question.group ?? ''],
          ['resource', question.resource],
          ['subresource', question.subresource],
          ['namespace', question.namespace],
          ['name', question.name],
        ] as [string, string | undefined][])),
  ];
  return ['allowed=true', ...fields.filter(([, value]) => value !== undefined && value !== '').map(([key, value]) => `${key}=${value}`)].join(',');
}

export class GivenAnswers implements AuthorizationSource {
  readonly #unanswered = new Map<string, string>();

  constructor(readonly answers: readonly AuthorizerAnswer[]) {}

  known(question: AuthorizationQuestion): AuthorizationAnswer {
    const answer = this.answers.find((candidate) => matches(candidate, question));
    if (!answer) {
      const problem = `no answer given to whether ${describeQuestion(question)}; give one, e.g. --authorizer-answer ${answerFor(question)}`;
      this.#unanswered.set(problem, problem);
      return fail(problem);
    }
    return { allowed: answer.allowed && answer.error === undefined, ...(answer.reason ? { reason: answer.reason } : {}), ...(answer.error !== undefined ? { error: answer.error } : {}) };
  }

  /** The same answers for kube-apiserver's matchConditions. */
  readonly authorize: Authorize = (question) => this.known(question);

  /** Throws ToolInputError naming every check asked since the last call that no answer matched. */
  requireAllAnswered(): void {
    const problems = [...this.#unanswered.values()];
    this.#unanswered.clear();
    if (problems.length > 0) throw new ToolInputError(`authorizer checks without an answer:\n  ${problems.join('\n  ')}`);
  }
}

async function answersIn(file: string): Promise<AuthorizerAnswer[]> {
  let entries: unknown;
  try {
    entries = parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ToolInputError(`--authorizer-answers ${file}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  if (!Array.isArray(entries)) throw new ToolInputError(`--authorizer-answers ${file}: must be a YAML list of answers (each with allowed and the fields it is for)`);
  return entries.map((entry, index) => {
    const answer = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? readAuthorizerAnswer(entry as Record<string, unknown>) : 'must be a mapping';
    if (typeof answer === 'string') throw new ToolInputError(`--authorizer-answers ${file}: answer ${index + 1}: ${answer}`);
    return answer;
  });
}

/** The command line's answers, then each file's, in order. */
export async function givenAnswers(tool: Pick<ToolOptions, 'authorizerAnswers' | 'authorizerAnswerFiles'>): Promise<GivenAnswers> {
  const fromFiles = await Promise.all(tool.authorizerAnswerFiles.map(answersIn));
  return new GivenAnswers([...tool.authorizerAnswers, ...fromFiles.flat()]);
}
