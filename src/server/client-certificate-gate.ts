import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { errorBody } from './review/review.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { SERVED_ENTRIES_PATH } from './served-entries-route.js';

/**
 * With `--client-ca`: every request but `GET /served-entries` needs a client certificate the
 * client CA signed, verified in the handshake (`socket.authorized`); others are answered 401
 * before their body is read, and no handler runs. kube-apiserver presents its certificate on
 * every call; a 401 is a failed call to it, as a refused handshake was. Once the server ends
 * connections (`endConnections()`: the shutdown began), the 401 ends its connection too, as
 * every other answer does then.
 */
export function addClientCertificateGate(app: FastifyInstance, logger: Logger, endConnections: () => boolean): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'GET' && request.url.split('?')[0] === SERVED_ENTRIES_PATH) return;
    const socket = request.raw.socket as TLSSocket;
    if (socket.authorized) return;
    const why = socket.authorizationError ? String(socket.authorizationError) : 'no certificate';
    logger.warn({ method: request.method, url: request.url, why }, 'request without a valid client certificate refused (--client-ca)');
    if (endConnections()) reply.header('connection', 'close');
    return reply.code(401).headers(SECURITY_HEADERS).type('application/json; charset=utf-8').send(errorBody(`a client certificate signed by the client CA (--client-ca) is required: ${why}`));
  });
}
