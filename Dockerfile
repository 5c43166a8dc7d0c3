# syntax=docker/dockerfile:1
# kube-admission-server image: `docker build -t kube-admission-server:0.1.0 .`
# Pin the base by digest for reproducible builds: --build-arg NODE_IMAGE=node:24-slim@sha256:...
ARG NODE_IMAGE=node:24-slim

# ---- build: all dependencies, compile, then drop the dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first, so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: Node 24 LTS, production dependencies and compiled code only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Everything stays owned by root and read-only to the server's user: the process cannot
# rewrite its own code. Certificates and keys are never part of the image: generate mode
# creates them at runtime (kept in a Secret), files mode reads a mounted Secret.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
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
