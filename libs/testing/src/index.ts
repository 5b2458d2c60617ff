export { webhookCapture } from './captures';
export { newMessageFixture } from './messages';
export { openTestDatabase, testDatabaseUrl, testNatsUrl } from './services';
export type { TestDatabase } from './services';
