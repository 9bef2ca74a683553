// A scripted MCP client on the TypeScript SDK that answers elicitations,
// for Weir's human-approval end-to-end tests.
//
//   node elicit-client.mjs SCENARIO.json
//   node elicit-client.mjs '{"servers": ...}'      (the scenario itself)
//   node elicit-client.mjs < SCENARIO.json         (or "-": read stdin)
//
// SCENARIO:
//   {"servers": {NAME: {"command": CMD, "args": [...], "env": {...}}},
//    "capabilities": {...},          client capabilities; default {"elicitation": {"form": {}}}
//    "answers": [ElicitResult, ...], the answers to elicitation/create, in order;
//                                    once they run out, every request is declined
//    "calls": [{"server": NAME, "tool": TOOL, "arguments": {...}}]}
//
// Connects to every server (each through its own stdio transport, with
// the capabilities above and a handler registered with
// client.setRequestHandler(ElicitRequestSchema, ...)), makes the calls in
// order, and prints one JSON object:
//   {"protocolVersions": {NAME: VERSION},
//    "results": [{"isError": bool, "text": "...", "error": "..."}],
//    "elicitations": [{"server": NAME, "mode": ..., "message": ...,
//                      "requestedSchema": {...}, "answer": {...}}]}
// "error" is set when the call failed with a JSON-RPC error instead of a
// result.
import { existsSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

function readScenario(arg) {
  if (arg === undefined || arg === "-") return JSON.parse(readFileSync(0, "utf8"));
  if (arg.trimStart().startsWith("{")) return JSON.parse(arg);
  if (existsSync(arg)) return JSON.parse(readFileSync(arg, "utf8"));
  throw new Error(`scenario ${arg}: neither JSON nor a file`);
}

const scenario = readScenario(process.argv[2]);
const answers = [...(scenario.answers ?? [])];
const capabilities = scenario.capabilities ?? { elicitation: { form: {} } };
const clients = {};
const out = { protocolVersions: {}, results: [], elicitations: [] };

for (const [name, spec] of Object.entries(scenario.servers)) {
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args ?? [],
    env: { ...process.env, ...(spec.env ?? {}) },
    stderr: "inherit",
  });
  const client = new Client({ name: "weir-e2e-ts-elicit", version: "1.0.0" }, { capabilities });
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const answer = answers.length > 0 ? answers.shift() : { action: "decline" };
      const p = request.params;
      out.elicitations.push({
        server: name,
        mode: p.mode ?? null,
        message: p.message,
        requestedSchema: p.requestedSchema ?? null,
        answer,
      });
      return answer;
    });
  }
  // The client hands the negotiated version to a transport that takes it.
  transport.setProtocolVersion = (v) => {
    out.protocolVersions[name] = v;
  };
  await client.connect(transport);
  clients[name] = client;
}

for (const call of scenario.calls) {
  try {
    const res = await clients[call.server].callTool({ name: call.tool, arguments: call.arguments ?? {} });
    const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    out.results.push({ isError: res.isError === true, text });
  } catch (err) {
    out.results.push({ isError: true, text: "", error: String(err?.message ?? err) });
  }
}

for (const c of Object.values(clients)) await c.close();
process.stdout.write(JSON.stringify(out) + "\n");
