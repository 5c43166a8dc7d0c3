/**
 * Answers `authorizer` checks by asking kube-apiserver's own authorizer (RBAC, Node, webhooks:
 * the chain that answers the check inside kube-apiserver) with a SubjectAccessReview
 * (authorization.k8s.io/v1) per question. Answers are cached briefly (answer-cache.ts);
 * concurrent reviews asking the same question share one call. Every call has a deadline and ends
 * when every review waiting for it has ended (their AbortSignals). The review's evaluationError
 * is the decision's error (`errored()`), as in kube-apiserver; a call that fails or does not end
 * in time is no answer at all: the expression fails and the failurePolicy decides.
 */
import type { V1SubjectAccessReview, V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import { questionKey, type AskResult, type AuthorizationSource } from '../cel/authorization-answers.js';
import type { AuthorizationAnswer, AuthorizationQuestion } from '../cel/library/authorizer.js';
import { describeApiFailure, formatApiFailure } from './api-errors.js';
import type { KubeApi } from './client.js';
import { AnswerCache } from './answer-cache.js';
import { callApi } from './request-deadline.js';

export interface SubjectAccessReviewOptions {
  api: Pick<KubeApi, 'authorization'>;
  /** How long an answer is kept (default 10 s). */
  ttlMs?: number;
  /** How many answers are kept (default 1000). */
  maxEntries?: number;
  /** Deadline of one SubjectAccessReview (default 2 s, within the 5 s a webhook gets by default). */
  callTimeoutMs?: number;
  now?: () => number;
}

export const SUBJECT_ACCESS_REVIEW_DEFAULTS = Object.freeze({ ttlMs: 10_000, maxEntries: 1000, callTimeoutMs: 2000 });

/** The SubjectAccessReview spec of a question: a resource check (any version), or a non-resource path. */
export function reviewSpecOf(question: AuthorizationQuestion): V1SubjectAccessReviewSpec {
  const { user, verb, path } = question;
  const spec: V1SubjectAccessReviewSpec = { user: user.username, groups: [...user.groups] };
  if (user.uid) spec.uid = user.uid;
  if (user.extra) spec.extra = Object.fromEntries(Object.entries(user.extra).map(([key, values]) => [key, [...values]]));
  if (path !== undefined) return { ...spec, nonResourceAttributes: { path, verb } };
  const { group = '', resource, subresource, namespace, name, fieldSelector, labelSelector } = question;
  spec.resourceAttributes = {
    verb,
    group,
    version: '*',
    ...(resource ? { resource } : {}),
    ...(subresource ? { subresource } : {}),
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
    ...(fieldSelector ? { fieldSelector: { rawSelector: fieldSelector } } : {}),
    ...(labelSelector ? { labelSelector: { rawSelector: labelSelector } } : {}),
  };
  return spec;
}

/**
 * The decision a review's status carries, as kube-apiserver's SubjectAccessReview REST handler
 * wrote it from its authorizer's (decision, reason, error): allowed, denied, else no opinion.
 */
function answerOf(review: V1SubjectAccessReview): AskResult {
  const status = review.status;
  if (!status) return { failed: 'the SubjectAccessReview came back without a status' };
  return {
    allowed: status.allowed === true,
    ...(status.denied ? { denied: true } : {}),
    ...(status.reason ? { reason: status.reason } : {}),
    ...(status.evaluationError ? { error: status.evaluationError } : {}),
  };
}

interface SharedCall {
  answer: Promise<AskResult>;
  controller: AbortController;
  waiters: number;
}

/** A question nobody asks: whether the anonymous user may read /healthz. Only whether the review may be created counts. */
const PROBE: AuthorizationQuestion = { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, verb: 'get', path: '/healthz' };

export class SubjectAccessReviews implements AuthorizationSource {
  readonly #api: Pick<KubeApi, 'authorization'>;
  readonly #cache: AnswerCache<AuthorizationAnswer>;
  readonly #callTimeoutMs: number;
  readonly #inFlight = new Map<string, SharedCall>();
  /** SubjectAccessReviews created, for tests and metrics. */
  calls = 0;

  constructor(options: SubjectAccessReviewOptions) {
    const { ttlMs, maxEntries, callTimeoutMs } = { ...SUBJECT_ACCESS_REVIEW_DEFAULTS, ...options };
    this.#api = options.api;
    this.#cache = new AnswerCache(ttlMs, maxEntries, options.now);
    this.#callTimeoutMs = callTimeoutMs;
  }

  known(question: AuthorizationQuestion, key = questionKey(question)): AuthorizationAnswer | undefined {
    return this.#cache.get(key);
  }

  ask(questions: readonly AuthorizationQuestion[], signal: AbortSignal): Promise<AskResult[]> {
    return Promise.all(questions.map((question) => this.#askOne(question, signal)));
  }

  /** Whether this server may create SubjectAccessReviews: 'forbidden' on a 403, else 'ok' (or what kept it from knowing). */
  async probe(signal: AbortSignal): Promise<'ok' | 'forbidden' | { failed: string }> {
    try {
      await this.#create(PROBE, signal);
      return 'ok';
    } catch (error) {
      return describeApiFailure(error).code === 403 ? 'forbidden' : { failed: formatApiFailure(error) };
    }
  }

  async #askOne(question: AuthorizationQuestion, signal: AbortSignal): Promise<AskResult> {
    const key = questionKey(question);
    const shared = this.#inFlight.get(key) ?? this.#start(key, question);
    shared.waiters++;
    try {
      return await untilAborted(shared.answer, signal);
    } finally {
      // The call ends with the last review that waits for it; a later review starts its own.
      if (--shared.waiters === 0) {
        shared.controller.abort(signal.reason);
        if (this.#inFlight.get(key) === shared) this.#inFlight.delete(key);
      }
    }
  }

  #start(key: string, question: AuthorizationQuestion): SharedCall {
    const controller = new AbortController();
    const answer = this.#create(question, controller.signal).then(
      (review) => {
        const answered = answerOf(review);
        // An authorizer error may pass (a webhook authorizer that was down): asked again next time.
        if (!('failed' in answered) && !answered.error) this.#cache.set(key, answered);
        return answered;
      },
      (error: unknown): AskResult => ({ failed: `SubjectAccessReview failed: ${formatApiFailure(error)}` }),
    );
    const shared: SharedCall = { answer, controller, waiters: 0 };
    this.#inFlight.set(key, shared);
    void answer.finally(() => {
      if (this.#inFlight.get(key) === shared) this.#inFlight.delete(key);
    });
    return shared;
  }

  #create(question: AuthorizationQuestion, signal: AbortSignal): Promise<V1SubjectAccessReview> {
    this.calls++;
    const body: V1SubjectAccessReview = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: reviewSpecOf(question) };
    return callApi(signal, (options) => this.#api.authorization.createSubjectAccessReview({ body }, options), this.#callTimeoutMs);
  }
}

/** `answer`, or a failure as soon as `signal` aborts (the review is decided without it). */
function untilAborted(answer: Promise<AskResult>, signal: AbortSignal): Promise<AskResult> {
  const ended = (): AskResult => ({ failed: 'the SubjectAccessReview did not end before the review did' });
  if (signal.aborted) return Promise.resolve(ended());
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(ended());
    signal.addEventListener('abort', onAbort, { once: true });
    void answer.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}
