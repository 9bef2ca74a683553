// A scripted MCP client on the TypeScript SDK that speaks Streamable HTTP,
// for Weir's `weir serve` end-to-end tests.
//
//   node http-client.mjs URL [HEADER:VALUE ...]
//
// Connects to the MCP endpoint URL (StreamableHTTPClientTransport, any
// extra arguments sent as request headers) with server-everything in mind,
// and does the same things every run:
//   tools/list; tools/call echo {"message": "weir says hello"};
//   tools/call trigger-long-running-operation {"duration": 1, "steps": 3}
//     with an onprogress handler (so a progress token);
//   resources/list, then resources/read of the first static document;
//   prompts/get simple-prompt; DELETE of the session.
// Prints one JSON object on stdout:
//   {"protocolVersion": "...", "sessionId": bool, "serverName": "...",
//    "tools": [NAME...], "echo": "...",
//    "progress": [{"progress": N, "total": N}...], "longRunning": "...",
//    "resources": [URI...], "resourceUri": "...", "resourceMimeType": "...",
//    "resourceText": "...", "promptMessages": N, "promptText": "...",
//    "terminate": "ok" or the error ending the session gave}
// and exits 1 with the error on stderr when any step fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, ...headerArgs] = process.argv.slice(2);
if (!url) {
  console.error("usage: node http-client.mjs URL [HEADER:VALUE ...]");
  process.exit(2);
}
const headers = {};
for (const h of headerArgs) {
  const i = h.indexOf(":");
  if (i <= 0) {
    console.error(`header ${h}: want NAME:VALUE`);
    process.exit(2);
  }
  headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
}

const text = (content) =>
  (content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// WEIR_GATEWAY_SERVER names the server behind weir gateway: tools and
// prompts are then SERVER__NAME and resources SERVER+URI, and the output
// names them without the prefix, so it compares with a direct run.
const gw = process.env.WEIR_GATEWAY_SERVER ?? "";
const named = (n) => (gw ? `${gw}__${n}` : n);
const unnamed = (n) => (gw && n.startsWith(`${gw}__`) ? n.slice(gw.length + 2) : n);
const unuri = (u) => (gw && u?.startsWith(`${gw}+`) ? u.slice(gw.length + 1) : u);

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
  });
  const client = new Client({ name: "weir-e2e-ts-http", version: "1.0.0" });
  await client.connect(transport);
  const out = {
    protocolVersion: transport.protocolVersion ?? null,
    sessionId: typeof transport.sessionId === "string" && transport.sessionId !== "",
    serverName: client.getServerVersion()?.name ?? null,
  };

  const { tools } = await client.listTools();
  out.tools = tools.map((t) => unnamed(t.name)).sort();

  const echo = await client.callTool({ name: named("echo"), arguments: { message: "weir says hello" } });
  if (echo.isError) throw new Error(`echo failed: ${text(echo.content)}`);
  out.echo = text(echo.content);

  out.progress = [];
  const long = await client.callTool(
    { name: named("trigger-long-running-operation"), arguments: { duration: 1, steps: 3 } },
    undefined,
    {
      onprogress: (p) => out.progress.push({ progress: p.progress, total: p.total }),
      timeout: 30000,
    },
  );
  if (long.isError) throw new Error(`trigger-long-running-operation failed: ${text(long.content)}`);
  out.longRunning = text(long.content);

  const { resources } = await client.listResources();
  out.resources = resources.map((r) => unuri(r.uri)).sort();
  const doc = out.resources.find((u) => u.startsWith("demo://resource/static/document/"));
  if (!doc) throw new Error(`no static document among the resources: ${out.resources.join(", ")}`);
  const read = await client.readResource({ uri: gw ? `${gw}+${doc}` : doc });
  out.resourceUri = unuri(read.contents[0]?.uri ?? null);
  out.resourceMimeType = read.contents[0]?.mimeType ?? null;
  out.resourceText = read.contents[0]?.text ?? null;

  const prompt = await client.getPrompt({ name: named("simple-prompt") });
  out.promptMessages = prompt.messages.length;
  out.promptText = prompt.messages.map((m) => (m.content?.type === "text" ? m.content.text : "")).join("\n");

  // DELETE ends the HTTP session (a server may answer 405: that is "ok" too).
  out.terminate = await transport.terminateSession().then(
    () => "ok",
    (err) => String(err?.message ?? err),
  );
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  console.error(`http-client: ${err?.stack ?? err}`);
  process.exit(1);
});
