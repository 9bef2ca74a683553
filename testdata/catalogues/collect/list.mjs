// node list.mjs OUT.json -- CMD ARGS...   (env from the environment)
// Speaks raw newline-delimited JSON-RPC over stdio: initialize, initialized,
// tools/list (following nextCursor). Writes {serverInfo, protocolVersion, tools} exactly as received.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const out = process.argv[2];
const i = process.argv.indexOf("--");
const cmd = process.argv[i + 1], args = process.argv.slice(i + 2);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], env: process.env });
let buf = "", stderr = "";
const pending = new Map();
child.stderr.on("data", (d) => { stderr += d; });
child.stdout.on("data", (d) => {
  buf += d;
  let n;
  while ((n = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, n).trim(); buf = buf.slice(n + 1);
    if (!line) continue;
    let m; try { m = JSON.parse(line); } catch { stderr += "[non-json stdout] " + line + "\n"; continue; }
    if (m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); }
    else if (m.method && m.id !== undefined) { // server->client request: answer empty
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.method === "roots/list" ? { roots: [] } : {} }) + "\n");
    }
  }
});
let id = 0;
function req(method, params) {
  return new Promise((res) => { const k = ++id; pending.set(k, res); child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: k, method, params }) + "\n"); });
}
const timer = setTimeout(() => { console.error("TIMEOUT\n" + stderr.slice(-3000)); child.kill("SIGKILL"); process.exit(2); }, +(process.env.LIST_TIMEOUT || 90000));
child.on("exit", (c) => { if (pending.size) { console.error("EXITED " + c + "\n" + stderr.slice(-3000)); process.exit(3); } });
const init = await req("initialize", { protocolVersion: process.env.PROTO || "2025-06-18", capabilities: {}, clientInfo: { name: "weir-catalogue", version: "1.0.0" } });
if (init.error) { console.error("INIT ERROR", JSON.stringify(init.error), stderr.slice(-2000)); process.exit(4); }
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
let tools = [], cursor;
for (;;) {
  const r = await req("tools/list", cursor ? { cursor } : {});
  if (r.error) { console.error("LIST ERROR", JSON.stringify(r.error), stderr.slice(-2000)); process.exit(5); }
  tools = tools.concat(r.result.tools || []);
  cursor = r.result.nextCursor; if (!cursor) break;
}
clearTimeout(timer);
writeFileSync(out, JSON.stringify({ serverInfo: init.result.serverInfo, protocolVersion: init.result.protocolVersion, tools }, null, 2));
console.log(`${tools.length} tools from ${JSON.stringify(init.result.serverInfo)}`);
child.kill("SIGTERM"); setTimeout(() => { child.kill("SIGKILL"); process.exit(0); }, 500);
