// A scripted MCP client on the TypeScript SDK, for Weir's end-to-end tests.
//
//   node client.mjs PLAN.json
//
// PLAN: {"servers": {NAME: {"command": CMD, "args": [...], "env": {...}}},
//        "calls": [{"server": NAME, "tool": TOOL, "arguments": {...}}]}
// Connects to every server (each through its own stdio transport), lists
// its tools, makes the calls in order, and prints one JSON object:
// {"tools": {NAME: [TOOL...]}, "results": [{"isError": bool, "text": "..."}]}
// In a call's arguments, {{handle}} is the last scratch table handle
// (t_…) a result named, and {{last}} the text of the previous result: a
// plan can query what it stored and send on what the query answered.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const clients = {};
const out = { tools: {}, results: [] };

for (const [name, spec] of Object.entries(plan.servers)) {
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args ?? [],
    env: { ...process.env, ...(spec.env ?? {}) },
    stderr: "inherit",
  });
  const client = new Client({ name: "weir-e2e-ts", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  out.tools[name] = tools.map((t) => t.name);
  clients[name] = client;
}

let handle = "";
let last = "";
const fill = (v) =>
  typeof v === "string"
    ? v.replaceAll("{{handle}}", handle).replaceAll("{{last}}", last)
    : Array.isArray(v)
      ? v.map(fill)
      : v && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]))
        : v;
for (const call of plan.calls) {
  const res = await clients[call.server].callTool({ name: call.tool, arguments: fill(call.arguments ?? {}) });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  out.results.push({ isError: res.isError === true, text });
  handle = (text.match(/t_[0-9a-f]{32}_[0-9]+/g) ?? [handle]).pop();
  last = text;
}

for (const c of Object.values(clients)) await c.close();
process.stdout.write(JSON.stringify(out) + "\n");
