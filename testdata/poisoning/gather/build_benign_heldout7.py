"""Benign heldout7: tools/list of two npm servers, installed with npm install --ignore-scripts at the pinned
versions (/tmp/pois7/benign/) and listed over stdio by ts/capture.mjs (gather/capture.mjs pointed at
@modelcontextprotocol/sdk 1.13.2 in /tmp/pois7/ts; no tool called).
  mcp-sequentialthinking-tools@0.0.3  HOME=/tmp/pois7/benign/home
  @magicuidesign/mcp@2.0.0            HOME=/tmp/pois7/benign/home
Tried and left out: @21st-dev/magic@0.2.3 (its tools/list is fetched from https://21st.dev/api/mcp and fails offline).
"""
import json
SERVERS = [("sequentialthinking-tools", "mcp-sequentialthinking-tools", "0.0.3", "MIT (package.json; LICENSE file)",
            "github.com/spences10/mcp-sequentialthinking-tools", "cap-seqtools.json"),
           ("magicui", "@magicuidesign/mcp", "2.0.0", "ISC (package.json; its LICENSE.md is an MIT License, Copyright (c) Magic UI)", "github:magicuidesign/mcp", "cap-magicui.json")]
out = open("/tmp/pois7/benign.jsonl", "w"); meta = {}
for server, pkg, ver, lic, repo, cap in SERVERS:
    d = json.load(open("/tmp/pois7/benign/" + cap))
    for t in d["tools"]:
        it = {"id": f"{server}/{t['name']}", "server": server, "package": pkg, "version": ver,
              "source": f"npm:{pkg}@{ver}", "licence": lic, "split": "heldout7"}
        for k in ("name", "title", "description", "inputSchema", "outputSchema", "annotations"):
            if k in t:
                it[k] = t[k]
        out.write(json.dumps(it, ensure_ascii=False) + "\n")
    meta[server] = {"package": pkg, "version": ver, "licence": lic, "repository": repo, "split": "heldout7",
                    "tools": len(d["tools"]), "captured": "node ts/capture.mjs OUT node <package bin>, HOME=/tmp/pois7/benign/home",
                    "serverInfo": d["serverInfo"]}
json.dump(meta, open("/tmp/pois7/benign_servers_heldout7.json", "w"), indent=1)
print(sum(m["tools"] for m in meta.values()))
