export { webhookCapture } from './captures';
export { openTestDatabase, testDatabaseUrl, testNatsUrl } from './services';
export type { TestDatabase } from './services';
