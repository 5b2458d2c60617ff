export { webhookCapture } from './captures';
export { newMessageFixture } from './messages';
export { configErrorOf, itRefusesABadServiceHostEnv, itRunsAsABackgroundService, validServiceHostEnv } from './service-host';
export type { RunningServiceUnderTest, TestServiceHost } from './service-host';
export { openTestDatabase, testDatabaseUrl, testNatsUrl } from './services';
export type { TestDatabase } from './services';
export { simulatorControl } from './simulator';
export { startTestS3, TEST_S3_CREDENTIALS } from './s3';
export type { TestS3Server } from './s3';
