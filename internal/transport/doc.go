// Package transport holds the ways Weir reaches the peers it relays
// between; each moves messages and knows nothing of what they mean.
//
//   - [Stdio] carries newline-delimited JSON-RPC over a pair of streams: the
//     proxy's own stdin and stdout toward the client, or a child server's
//     stdout and stdin. It is the relay's Transport for weir run.
//   - [StartCommand] (and [Start]) runs an MCP server as a child process in
//     a process group of its own, with pipes for its standard input and
//     output and its standard error passed through, and [Child.Shutdown]
//     stops it the way the MCP specification describes: close its input,
//     wait, then SIGTERM, then SIGKILL, and whatever it left in its group
//     is killed with it. weir run and weir scan start servers this way.
package transport
