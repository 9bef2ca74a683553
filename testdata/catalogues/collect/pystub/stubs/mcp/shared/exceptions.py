class McpError(Exception): pass
