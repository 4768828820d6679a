/** The gateway's version, as the API description and the MCP server announce it. */
export const PORTICO_VERSION = '0.1.0';
