/**
 * The one evaluation path (src/kube/evaluation/) with the server's own handler run filled in:
 * what evaluate, test and the library API call. audit and the server's background audit take
 * StoredObjectEvaluation with the same run.
 */
import * as path from '../kube/evaluation/evaluate-objects.js';
import * as chain from '../kube/evaluation/simulate.js';
import type { AdmissionRequest, Webhook } from '../admission/types.js';
import { runAsCalled } from '../server/run-as-called.js';

/** How the objects are evaluated; `run` defaults to the server's (each handler as kube-apiserver's call gets it). */
export type EvaluateOptions = Omit<path.EvaluationPathOptions, 'run'> & { run?: chain.RunHandler };

/** What a simulation needs besides the webhooks and the request; `run` defaults to the server's. */
export type SimulationOptions = Omit<chain.SimulationPathOptions, 'run'> & { run?: chain.RunHandler };

/** Every manifest through `webhooks`, one after another (each result independent of the others). */
export function evaluateObjects(webhooks: readonly Webhook[], manifests: readonly path.Manifest[], options: EvaluateOptions): Promise<path.EvaluatedObject[]> {
  return path.evaluateObjects(webhooks, manifests, { run: runAsCalled, ...options });
}

/** evaluateObjects() handing each result to `onResult` as soon as it is made, holding none. */
export function evaluateEach(webhooks: readonly Webhook[], manifests: readonly path.Manifest[], options: EvaluateOptions, onResult: (result: path.EvaluatedObject) => void): Promise<void> {
  return path.evaluateEach(webhooks, manifests, { run: runAsCalled, ...options }, onResult);
}

/** Runs `request` through `webhooks` (policy order, custom ones after) and reports every step. */
export function simulate(webhooks: readonly Webhook[], request: AdmissionRequest, options: SimulationOptions): Promise<chain.ObjectOutcome> {
  return chain.simulate(webhooks, request, { run: runAsCalled, ...options });
}
