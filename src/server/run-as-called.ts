import type { AdmissionRequest, KubeObject, Webhook } from '../admission/types.js';
import { answerBudgetMs, callerTimeoutMs } from './review/review.js';
import { runReview, type ReviewRun } from './review/run-handler.js';

/**
 * The handler run the server makes when kube-apiserver calls `webhook` with its timeoutSeconds
 * (`?timeout=` of that, answered a margin before it): what evaluate, test, audit and the
 * background audit run each handler with, so they decide as admission does.
 */
export function runAsCalled(webhook: Webhook, request: AdmissionRequest, namespaceObject: KubeObject | null, original: KubeObject | null): ReviewRun | Promise<ReviewRun> {
  return runReview(webhook, request, answerBudgetMs(callerTimeoutMs(undefined, webhook.timeoutSeconds)), undefined, namespaceObject, undefined, original);
}
