// Package transport starts and stops the processes and connections Weir
// relays between. For stdio, [Start] runs an MCP server as a child process
// with pipes for its standard input and output, passes its standard error
// through, and shuts it down the way the MCP specification describes:
// close its input, wait, then SIGTERM, then SIGKILL.
package transport
