// node rawcap.mjs OUT.json CMD [ARGS...]: raw JSON-RPC over stdio, no schema validation
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const [out, cmd, ...args] = process.argv.slice(2);
const p = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"], env: process.env });
let buf = "", id = 0; const wait = {};
p.stdout.on("data", (d) => { buf += d; let i; while ((i = buf.indexOf("\n")) >= 0) { const line = buf.slice(0, i); buf = buf.slice(i + 1); try { const m = JSON.parse(line); if (m.id != null && wait[m.id]) wait[m.id](m); } catch {} } });
const req = (method, params) => new Promise((res) => { const i = ++id; wait[i] = res; p.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: i, method, params }) + "\n"); });
setTimeout(() => { console.error("timeout"); process.exit(3); }, 60000);
const init = await req("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "weir-capture", version: "1.0.0" } });
p.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
const res = { serverInfo: init.result.serverInfo, instructions: init.result.instructions ?? "", tools: [], prompts: [], resources: [] };
let cursor;
do { const r = await req("tools/list", cursor ? { cursor } : {}); res.tools.push(...r.result.tools); cursor = r.result.nextCursor; } while (cursor);
writeFileSync(out, JSON.stringify(res, null, 1));
console.error(`${res.tools.length} tools`);
p.kill(); process.exit(0);
