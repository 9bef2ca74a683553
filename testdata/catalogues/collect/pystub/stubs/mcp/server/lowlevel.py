from mcp.server import Server, NotificationOptions
