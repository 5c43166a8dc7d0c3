import type { AdmissionRequest } from '../admission/types.js';
import { nobodyToAsk } from './authorization-answers.js';
import { Authorizer, type AuthorizationUser, type Authorize } from './library/authorizer.js';

/** The `authorizer` variable of a request: its user, and `requestResource` its own resource. */
export function requestAuthorizer(request: AdmissionRequest, authorize: Authorize = nobodyToAsk): Authorizer {
  const { username = '', uid, groups = [], extra } = request.userInfo ?? {};
  const user: AuthorizationUser = { username, groups, ...(uid ? { uid } : {}), ...(extra ? { extra } : {}) };
  const { group, resource } = request.resource;
  return new Authorizer(user, authorize, {
    group,
    resource,
    ...(request.subResource ? { subresource: request.subResource } : {}),
    ...(request.namespace ? { namespace: request.namespace } : {}),
    ...(request.name ? { name: request.name } : {}),
  });
}
