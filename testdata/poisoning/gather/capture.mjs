// node capture.mjs OUT.json CMD [ARGS...]  (env passed through)
// Lists tools/prompts/resources/instructions of an MCP server over stdio.
import { writeFileSync } from "node:fs";
import { Client } from "/work/main/testdata/npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StdioClientTransport } from "/work/main/testdata/npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js";
const [out, cmd, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: cmd, args, env: process.env, stderr: "pipe" });
const client = new Client({ name: "weir-capture", version: "1.0.0" });
const timer = setTimeout(() => { console.error("timeout"); process.exit(3); }, 90000);
await client.connect(transport);
const res = { serverInfo: client.getServerVersion(), instructions: client.getInstructions() ?? "", tools: [], prompts: [], resources: [] };
let cursor;
do { const r = await client.listTools(cursor ? { cursor } : {}); res.tools.push(...r.tools); cursor = r.nextCursor; } while (cursor);
const caps = client.getServerCapabilities() ?? {};
if (caps.prompts) { try { res.prompts = (await client.listPrompts()).prompts; } catch (e) {} }
if (caps.resources) { try { res.resources = (await client.listResources()).resources; } catch (e) {} }
writeFileSync(out, JSON.stringify(res, null, 1));
console.error(`${res.tools.length} tools`);
clearTimeout(timer);
await client.close();
process.exit(0);
