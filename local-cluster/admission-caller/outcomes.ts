/** What admission ends with: denials, call errors and the errors outside failurePolicy (contract 2.3, 2.6). */
import type { StatusBody } from '../fake-apiserver/index.js';
import { isRecord } from '../fake-apiserver/objects.js';
import { statusBody } from '../fake-apiserver/status.js';

/** A failed call of one webhook (the text after `failed calling webhook "x": `): failurePolicy decides. */
export class CallError extends Error {}

/**
 * No kube-apiserver that could serve the request is up, or the one serving it went down before
 * admission ended: the client's write is refused by the control plane (connection refused or cut)
 * and nothing is admitted or stored.
 */
export class ControlPlaneDownError extends Error {
  override readonly name = 'ControlPlaneDownError';
}

/** An outcome that ends admission no matter the failurePolicy. */
export class FinalStatus extends Error {
  constructor(readonly status: StatusBody) {
    super(status.message);
  }
}

/** ToStatusErr: the Status the user sees when a webhook answers allowed:false. */
export function denial(hookName: string, status: Record<string, unknown> | undefined): StatusBody {
  const deniedBy = `admission webhook "${hookName}" denied the request`;
  const message = typeof status?.message === 'string' ? status.message : '';
  const reason = typeof status?.reason === 'string' ? status.reason : '';
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const given = typeof status?.status === 'string' ? status.status : '';
  // "" and "Success" become "Failure"; anything else is passed through.
  const state = (given === '' || given === 'Success' ? 'Failure' : given) as StatusBody['status'];
  const text = message !== '' ? `${deniedBy}: ${message}` : reason !== '' ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  return statusBody({
    status: state,
    message: text,
    reason: reason === '' ? undefined : reason,
    details: isRecord(status?.details) ? (status.details as StatusBody['details']) : undefined,
    code,
  });
}

export function timeoutStatus(): StatusBody {
  return statusBody({
    status: 'Failure',
    message: 'Timeout: request did not complete within requested timeout',
    reason: 'Timeout',
    details: {},
    code: 504,
  });
}

export function dryRunUnsupported(hookName: string): StatusBody {
  return statusBody({ status: 'Failure', message: `admission webhook "${hookName}" does not support dry run`, reason: 'BadRequest', code: 400 });
}
