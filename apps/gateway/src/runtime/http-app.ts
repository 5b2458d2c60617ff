// createHttpApp moved up to apps/gateway/src/http-app.ts (it composes every area; runtime/ is below them).
// This path stays only for bench/history/main.ts, being edited by another change; remove it with that import.
export { createHttpApp } from '../http-app';
