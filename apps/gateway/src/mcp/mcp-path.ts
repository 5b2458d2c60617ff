// MCP_PATH and isMcpUrl moved to common/ (the instance guard's hook skips /mcp); mcp.routes.ts imports them here.
export { isMcpUrl, MCP_PATH } from '../common/mcp-path';
