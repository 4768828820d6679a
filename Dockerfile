# Portico gateway image: build with the full toolchain, run with production dependencies only.
# docker build -t portico . && docker run -p 8080:8080 -v portico-data:/data portico

FROM node:20-bookworm-slim AS build
WORKDIR /app
# Manifests first, so the dependency layer is reused until they change.
COPY package.json package-lock.json ./
COPY packages/emulators/package.json packages/emulators/package.json
COPY packages/sdk/package.json packages/sdk/package.json
COPY packages/gateway/package.json packages/gateway/package.json
COPY packages/gateway/bin packages/gateway/bin
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json ./
COPY packages/emulators packages/emulators
COPY packages/sdk packages/sdk
COPY packages/gateway packages/gateway
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORTICO_HOST=0.0.0.0 \
    PORTICO_PORT=8080 \
    PORTICO_DATA_DIR=/data \
    NODE_OPTIONS="--max-semi-space-size=32 --initial-old-space-size=128"
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages/emulators/package.json packages/emulators/package.json
COPY --from=build /app/packages/emulators/dist packages/emulators/dist
COPY --from=build /app/packages/sdk/package.json packages/sdk/package.json
COPY --from=build /app/packages/sdk/dist packages/sdk/dist
COPY --from=build /app/packages/gateway/package.json packages/gateway/package.json
COPY --from=build /app/packages/gateway/bin packages/gateway/bin
COPY --from=build /app/packages/gateway/dist packages/gateway/dist
COPY --from=build /app/packages/gateway/dashboard-ui packages/gateway/dashboard-ui
COPY --from=build /app/packages/gateway/providers packages/gateway/providers
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORTICO_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "packages/gateway/dist/cli.js", "start"]
