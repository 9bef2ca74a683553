package clients_test

import (
	"fmt"

	"github.com/weir-sec/weir/internal/clients"
)

func ExampleWrap() {
	loc := clients.Location{Client: clients.ClaudeDesktop, Path: "claude_desktop_config.json", Scope: clients.ScopeUser, Format: clients.FormatMCPServers}
	c, err := clients.Parse(loc, []byte(`{
  // comments and trailing commas are kept
  "mcpServers": {
    "notes": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]},
    "web": {"command": "uvx", "args": ["mcp-server-fetch"]},
    "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Api-Key": "k-123"}},
    "old": {"type": "sse", "url": "https://example.com/sse"},
    "my files": {"command": "files-server"},
  },
}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, changes, err := clients.Wrap(c, clients.WrapOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	for _, ch := range changes {
		fmt.Printf("%s %s\n  %s\n", ch.Action, ch.Server, ch.Detail)
	}
	// Output:
	// {
	//   // comments and trailing commas are kept
	//   "mcpServers": {
	//     "notes": {"command": "weir", "args": ["run", "--name", "notes", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]},
	//     "web": {"command": "weir", "args": ["run", "--name", "web", "--", "uvx", "mcp-server-fetch"]},
	//     "docs": {"type": "stdio", "command": "weir", "args": ["run", "--name", "docs", "--upstream", "https://example.com/mcp", "--header", "X-Api-Key: ${WEIR_HEADER_1}"], "env": {"WEIR_UNWRAP": "eyJ2IjoyLCJ0eXBlS2V5IjoidHlwZSIsInR5cGUiOiJcImh0dHBcIiIsImZpcnN0IjoiXCJ1cmxcIjogXCJodHRwczovL2V4YW1wbGUuY29tL21jcFwiIiwibW92ZWQiOiIsIFwiaGVhZGVyc1wiOiB7XCJYLUFwaS1LZXlcIjogXCJrLTEyM1wifSIsImhlYWRlcnMiOjF9", "WEIR_HEADER_1": "k-123"}},
	//     "old": {"type": "sse", "url": "https://example.com/sse"},
	//     "my files": {"command": "files-server"},
	//   },
	// }
	// wrapped notes
	//   weir run --name notes -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes
	// wrapped web
	//   weir run --name web -- uvx mcp-server-fetch
	// wrapped docs
	//   WEIR_HEADER_1='***' weir run --name docs --upstream https://example.com/mcp --header 'X-Api-Key: ${WEIR_HEADER_1}'
	// refused old
	//   it uses the older HTTP+SSE transport, which weir run --upstream does not speak (it speaks Streamable HTTP); if the server also offers Streamable HTTP (often at /mcp), point the entry there and run weir wrap again
	// refused my files
	//   server name "my files" cannot be used with weir run --name: it contains a space; a name is 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit. Rename the entry (e.g. to "my-files") and run weir wrap again
}

func ExampleDiscover() {
	env := clients.Env{OS: "windows", Home: `C:\Users\ada`, AppData: `C:\Users\ada\AppData\Roaming`}
	for _, loc := range clients.Candidates(env)[:3] {
		fmt.Println(loc)
	}
	// Output:
	// Claude Desktop (user): C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json
	// Claude Code (user): C:\Users\ada\.claude.json
	// Cursor (user): C:\Users\ada\.cursor\mcp.json
}
