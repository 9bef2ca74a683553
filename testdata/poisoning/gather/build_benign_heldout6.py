"""Benign heldout6: tools/list of two npm servers, installed with npm install --ignore-scripts at the pinned
versions and listed over stdio by ts/capture.mjs (SDK 1.11.0 client; no tool called).
  mcp-graphql@2.0.4          ENDPOINT=http://localhost:9/graphql (a dummy, unreachable endpoint)
  @kazuph/mcp-taskmanager@1.1.1  HOME=/tmp/pois6/benign/home
"""
import json
SERVERS = [("graphql", "mcp-graphql", "2.0.4", "MIT", "github:blurrah/mcp-graphql", "cap-graphql.json"),
           ("kazuph-taskmanager", "@kazuph/mcp-taskmanager", "1.1.1", "MIT", "https://github.com/kazuph/mcp-taskmanager", "cap-taskmanager.json")]
out = open("/tmp/pois6/benign.jsonl", "w"); meta = {}
for server, pkg, ver, lic, repo, cap in SERVERS:
    d = json.load(open("/tmp/pois6/benign/" + cap))
    for t in d["tools"]:
        it = {"id": f"{server}/{t['name']}", "server": server, "package": pkg, "version": ver,
              "source": f"npm:{pkg}@{ver}", "licence": lic, "split": "heldout6"}
        for k in ("name", "title", "description", "inputSchema", "outputSchema", "annotations"):
            if k in t:
                it[k] = t[k]
        out.write(json.dumps(it, ensure_ascii=False) + "\n")
    meta[server] = {"package": pkg, "version": ver, "licence": lic, "repository": repo, "split": "heldout6",
                    "tools": len(d["tools"]), "serverInfo": d["serverInfo"]}
json.dump(meta, open("/tmp/pois6/benign_servers_heldout6.json", "w"), indent=1)
print(sum(m["tools"] for m in meta.values()))
