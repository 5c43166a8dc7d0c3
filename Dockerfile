# kube-admission-server image: `npm run image` (scripts/build-image.sh), or
# `docker build --build-arg VERSION=0.1.0 -t kube-admission-server:0.1.0 .`
# Pin the base by digest for reproducible builds: --build-arg NODE_IMAGE=node:26-slim@sha256:...
# (On a machine that reaches no image registry, scripts/base-image.sh makes a local node:26-slim.)
ARG NODE_IMAGE=node:26-slim

# ---- build: all dependencies, compile the library, bundle the server, then drop the dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first, so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.package.json ./
COPY scripts/bundle-server.mjs ./scripts/
COPY src ./src
# The server's entry becomes one file with everything it imports (scripts/bundle-server.mjs): a
# start reads and compiles one file instead of some 1,700 modules. dist/src keeps the library.
RUN npm run build:package && npm run build:bundle && cp dist/bundle/main.js dist/src/main.js \
 && npm prune --omit=dev --no-audit --no-fund \
 && ln -s .. node_modules/kube-admission-server
# That link makes this image a base for your own handlers (docs/writing-webhooks.md, "Ship it"):
# `FROM kube-admission-server:<version>` plus compiled code that imports 'kube-admission-server'
# resolves the name to this /app, the one server the image runs, as `npm link` would.
# Node's module compile cache for that file, made here by the Node the image runs, as the user it
# runs as (Node keys the cache folder by version, V8 flags and uid), then made root's and read-only.
RUN mkdir .node-compile-cache && chown 1000:1000 .node-compile-cache
USER 1000:1000
RUN NODE_COMPILE_CACHE=/app/.node-compile-cache node dist/src/main.js --help >/dev/null
USER root
RUN chown -R 0:0 .node-compile-cache && chmod -R a+rX,go-w .node-compile-cache

# ---- node: the base image less its package managers and their configuration ----
# The server needs node and nothing that installs code: npm, npx, corepack and yarn are attack
# surface and scanner noise, and the npm configuration of the machine that built the image is
# none of the runtime's business.
FROM ${NODE_IMAGE} AS node
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* /usr/local/etc/npmrc /root/.npm /tmp/*

# ---- runtime: Node 26 LTS, production dependencies, compiled code and its compile cache only ----
# Also the base image of your own webhooks: the same target, built once, serves both (a second
# target would be a second image to release, scan and keep at the same version). Your Dockerfile
# adds a layer of compiled code and its own ENTRYPOINT; user, read-only code and no npm carry over.
# From scratch with the cleaned file system copied in, so what was removed above is not merely
# hidden by a later layer but absent from every layer of the image.
FROM scratch AS runtime
COPY --from=node / /
# 4 MB semi-spaces: V8's default young generation (16 MB each) adds about 35 MB of RSS under
# admission load for no measurable throughput (BENCHMARKS.md measures with this flag). A
# NODE_OPTIONS of your own replaces this one: keep the flag in it.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    NODE_COMPILE_CACHE=/app/.node-compile-cache \
    NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
# Everything stays owned by root and read-only to the server's user: the process cannot
# rewrite its own code. Certificates and keys are never part of the image: generate mode
# creates them at runtime (kept in a Secret), files mode reads a mounted Secret.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/.node-compile-cache ./.node-compile-cache
COPY policies ./policies
COPY schema ./schema
# Numeric, so the kubelet can verify runAsNonRoot without reading /etc/passwd
# (uid 1000 is the image's "node" user).
USER 1000:1000
EXPOSE 8443 8080
# Exec form: node is PID 1 and receives SIGTERM itself, so the graceful shutdown (delay,
# teardown, bounded drain) runs. A shell form would put /bin/sh in front, which does not
# forward the signal, and the kubelet's SIGKILL would cut everything short.
ENTRYPOINT ["node", "dist/src/main.js"]
# Last, so a new revision only relabels the image and reuses every layer above.
ARG NODE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="kube-admission-server" \
      org.opencontainers.image.description="Kubernetes admission webhook server that manages its own certificates, registration and shutdown" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
