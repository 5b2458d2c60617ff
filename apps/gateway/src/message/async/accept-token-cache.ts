// The cache moved to common/ (the instance guard uses it); this path stays for the importers of this area
// and session-move.service.ts until they import common/accept-token-cache directly.
export { AcceptTokenCache, asyncAcceptTokens, isAsyncSend, isSend } from '../../common/accept-token-cache';
