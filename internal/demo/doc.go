// Package demo holds the toy MCP servers and the scripted attack behind
// `weir demo`. The servers are real MCP servers (the go-sdk over stdio),
// shipped inside the weir binary as the hidden `weir demo-server` command,
// and each runs as a subprocess behind its own `weir run` proxy, the way a
// desktop client runs them:
//
//   - notes: the user's private notes (read_note, list_notes);
//   - web: a fetch tool whose page carries a hidden prompt injection;
//   - mail: send_email, which writes what it sends to a journal file, so the
//     demo can prove afterwards what did and did not leave.
package demo
