// Package clients finds, reads and rewrites the MCP configuration files of
// the MCP clients people use (Claude Desktop, Claude Code, Cursor, VS Code,
// Windsurf, Gemini CLI, Zed, Kiro, Cline, Continue, Goose, LM Studio,
// opencode), so that every server a client starts runs behind Weir. It
// works on files only: it starts no server and judges no tool, and it
// imports no other Weir package.
//
// # How it fits
//
// `weir clients` lists what [Discover] finds. `weir scan` reads each file
// with [Read] and hands its [Server] entries to package scan, which
// launches them (Command, Args, Env, EnvFile, Cwd; for a wrapped entry
// [Server.Inner] is the server behind weir run, and [Server.RunFlags] its
// --name and --policy) and points at each with [Config.Lines]. `weir wrap`
// calls [WrapFile], which rewrites each stdio entry to start `weir run
// --name NAME [--policy FILE] -- COMMAND ARGS...` instead of the server
// itself, and each remote (Streamable HTTP) entry into a stdio entry that
// starts `weir run --name NAME [--policy FILE] --upstream URL [--header
// 'NAME: ${WEIR_HEADER_N}']...`, the header values in its env
// ([Server.Upstream] reads it back); `weir unwrap` calls
// [UnwrapFile]. `weir run` is what wrapped entries run: it starts the
// original command as its child (or reaches the remote server) and relays
// its messages, deciding every tool call.
//
// A wrapped Claude Desktop entry looks like this:
//
//	"notes": {
//	  "command": "weir",
//	  "args": ["run", "--name", "notes", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
//	}
//
// # Discovery
//
// [Candidates] is the table of known locations for one [Env] (OS, home,
// %APPDATA%, $XDG_CONFIG_HOME, project directory); [Discover] keeps those
// that exist. Env is injected, so the macOS and Windows layouts are tested
// on Linux; [FromOS] fills it in for the running system. [Identify] tells a
// file named on the command line by its path, or failing that by its
// content.
//
// # Formats
//
// Each [Location] has a Format saying where its servers are:
//
//   - "mcpServers": {"mcpServers": {NAME: ENTRY}} — Claude Desktop, Claude
//     Code's project .mcp.json, Cursor, Windsurf (URL key "serverUrl"),
//     Kiro, Cline (type "stdio", "sse" or "streamableHttp"), LM Studio.
//   - "claude-code": ~/.claude.json; its top-level mcpServers (user scope)
//     and projects.<dir>.mcpServers (local scope; [Server.Project] is the
//     directory). Everything else in that large file is left untouched.
//   - "gemini": mcpServers; "httpUrl" is Streamable HTTP, "url" SSE.
//   - "vscode": mcp.json with {"servers": {...}} (user and .vscode/).
//   - "vscode-settings": settings.json with "mcp": {"servers": {...}}, or
//     the flat key "mcp.servers"; the rest of the settings stay as they are.
//   - "zed": settings.json "context_servers"; an entry is {"command": "x",
//     "args": [...]} or the older {"command": {"path": "x", "args": [...],
//     "env": {...}}}; entries an extension provides (no command, no url)
//     are TransportBuiltin.
//   - "opencode": opencode.json(c) "mcp" (or opencode 2's "mcp.servers"),
//     entries {"type": "local", "command": ["x", ...], "environment": {...}}
//     or {"type": "remote", "url": ...}.
//   - "continue": ~/.continue/config.json
//     experimental.modelContextProtocolServers, a list of {"transport":
//     {"type": "stdio", "command", "args"}}; an item's "name", if any, is
//     its name, else one is derived from the command ("npx -y
//     @scope/server-x" → "server-x").
//   - "continue-yaml": ~/.continue/config.yaml mcpServers, a list of {name,
//     command, args, env}. The per-file blocks in .continue/mcpServers/ are
//     not discovered (Identify reads one if named).
//   - "goose": Goose's config.yaml "extensions", entries {type: stdio, cmd,
//     args, envs} or {type: sse|streamable_http, uri}; builtin and other
//     in-process extensions are TransportBuiltin.
//
// An ENTRY is {"command", "args", "env", "cwd"} for stdio, or {"type":
// "http"|"sse", "url", "headers"} for HTTP; "type" may be left out.
// Entries with "disabled": true or "enabled": false are read (and wrapped)
// like the others, with [Server.Disabled] set. Values are read as written:
// ${VAR}, ${input:x} and ~ are not expanded.
//
// JSON files are read as JSONC: // and /* */ comments and trailing commas
// are accepted (and kept when rewriting). A syntax error names the file,
// line and column and says what to fix:
//
//	claude_desktop_config.json:4:20: invalid escape "\P" in a string; valid escapes are \" \\ \/ \b \f \n \r \t and \uXXXX; write a backslash as \\ (a Windows path is "C:\\Program Files\\...")
//
// A key repeated where servers are read ("mcpServers" twice, or "command"
// twice in one entry) is an error: clients use the last one, and a scanner
// that looked at another would be fooled.
//
// # Rewriting in place
//
// [Wrap] and [Unwrap] edit only the bytes of the command and args values:
// the new arguments are inserted in front of the existing ones in the
// list's own layout (one per line in a multi-line list, inline in an inline
// one), the original command moves into the list with its exact spelling
// (escapes included), and an args member is added right after command when
// there is none, laid out so that Unwrap can tell it from an "args": [] that
// was there before. Comments, key order, indentation, CRLF line endings and
// a byte order mark are kept, and Unwrap(Wrap(x)) is x byte for byte. Both
// re-parse their output and refuse to return a file whose servers read
// differently from what was intended. Property tests check these claims on
// random files in random layouts, and fuzz tests on arbitrary input.
//
// YAML files (Goose, Continue) are read, wrapped and unwrapped the same way,
// on spans computed from go.yaml.in/yaml/v3's positions: "- item" block
// lists and [a, b] flow lists are extended in place, a missing args is added
// as a flow list on its own line. An entry that uses anchors, aliases,
// merge keys or tags, or multi-line or block scalars, in its command or args
// is refused (reported and left as it is), never guessed at.
//
// Entries Wrap refuses are left untouched and reported: names ValidName
// rejects, "args": null (it could not be told apart from [] afterwards),
// opencode entries with a string command (opencode reads only lists),
// client-provided servers, entries with a Problem, and the remote entries
// described below.
//
// Server names become `weir run --name` and the server half of policy
// patterns ("server:tool") and flow sources ("server/tool"); [ValidName]
// says which are accepted, and entries with other names are refused with a
// suggestion.
//
// # Remote entries
//
// A Streamable HTTP entry, in any format, is rewritten member by member:
// its type value becomes the format's stdio type ("stdio", opencode's
// "local"), its URL member (or "headers", whichever comes first) is
// replaced by command, args and env members written in the entry's layout,
// and the other is removed with the separator before it. Each header
// becomes a --header flag naming a variable of the entry's env,
// WEIR_HEADER_N (N = 1, 2, ... in header order, skipping a name the env
// already has), which holds its value as written:
//
//	"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_TOKEN}"}}
//	"linear": {"type": "stdio", "command": "weir", "args": ["run", "--name", "linear", "--upstream", "https://mcp.linear.app/mcp", "--header", "Authorization: ${WEIR_HEADER_1}"], "env": {"WEIR_UNWRAP": "eyJ2Ijoy...", "WEIR_HEADER_1": "Bearer ${LINEAR_TOKEN}"}}
//
// A process's arguments are visible to every local user (ps,
// /proc/PID/cmdline), its environment only to its owner, so no header
// value, literal or reference (which the client expands before starting
// weir run), goes into args. weir run --header expands ${WEIR_HEADER_N}
// once, never what the variable holds, so a literal $ or ${X} reaches the
// server as written; a blank value stays in its flag. Claude Code is the
// exception: it expands every ${...} of a stdio entry's args itself, from
// its own environment, and skips a server whose variable is not set there,
// so its headers become --header-env 'NAME=WEIR_HEADER_N' flags, which name
// the variable with no ${...}; weir run takes its value as it is, and
// Claude Code expands the references of env values as of headers.
//
// The original text of what was replaced and removed is kept, base64
// encoded, in the variable WEIR_UNWRAP of the entry's env (an env the entry
// had gets it, and the header variables, as its first variables): env is
// accepted in a stdio entry by every format, opencode's strict schema
// included, clients keep it when they rewrite their files, and weir run
// ignores it. [Unwrap] puts the text back (and removes the header
// variables), then checks by wrapping the result again, which must give
// exactly the current bytes; an entry edited since, or without its record,
// is refused. An entry an earlier weir wrap rewrote with its header values
// in args (record version 1, as it once wrote for Claude Code too) is
// unwrapped the same way. [Wrap] checks the other way round before it
// returns anything: the rewritten entry must unwrap to exactly the
// original bytes. Layout is taken from the entry's own bytes only, so that
// rewriting one entry never changes how another on the same line is
// rewritten.
//
// Left as they are and refused, with the reason: HTTP+SSE entries (weir run
// --upstream speaks Streamable HTTP only; "type": "sse", Gemini's "url", an
// untyped URL ending in /sse); entries that sign in another way ("oauth",
// "auth", "headersHelper", "authProviderType", "requestOptions"...) or hold
// any member weir run cannot carry over (Weir drops nothing silently);
// headers weir run sets itself, credentials in the URL, non-HTTP URLs; and,
// for a client not documented to expand in a stdio entry's args and env
// the references it expands in a remote entry's URL and headers, a header
// or URL holding a variable reference. Claude Code and Gemini CLI expand
// ${VAR} there as in headers; Cursor and VS Code their ${env:NAME},
// ${input:id} and own names; Windsurf ${env:NAME}; opencode {env:NAME}. A
// reference those clients leave as it is reaches the server as written
// too. An entry with no headers is wrapped with a note: OAuth sign-in the
// client did itself does not carry over.
//
// # Files, backups and undo
//
// [WrapFile] writes PATH.weir-backup-YYYYMMDDTHHMMSSZ first (UTC, with the
// file's permissions; "-1", "-2" appended within one second), reads it back
// to verify it, then replaces the file atomically (temporary file, sync,
// rename) with the same mode, and refuses to if the file changed on disk
// meanwhile. Symbolic links are followed, so a link into a dotfiles
// repository stays a link. Nothing is written when nothing changes.
//
// [UnwrapFile] needs no sidecar: it wraps each backup again, newest first,
// with the weir path and policy the file's wrapped entries use, and when
// that gives exactly the current bytes, the file has not changed since weir
// wrap wrote it, and the backup is restored byte for byte
// ([Result].Restored). Otherwise it unwraps the entries in place (after a
// backup of the current content) and [Result].Note says so. Backups are
// never deleted by Weir.
package clients
