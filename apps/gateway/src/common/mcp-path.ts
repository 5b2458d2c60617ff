/** Where the gateway's MCP server answers (streamable HTTP, POST only). */
export const MCP_PATH = '/mcp';

/** Whether a request URL (path and query) is /mcp's, without splitting it: the request hooks ask on every request. */
export function isMcpUrl(url: string): boolean {
  return url.startsWith(MCP_PATH) && (url.length === MCP_PATH.length || url[MCP_PATH.length] === '?');
}
