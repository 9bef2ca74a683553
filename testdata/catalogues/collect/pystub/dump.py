import asyncio, json, os, sys, importlib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs"))
src, mod, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, src)
import mcp.server as ms
m = importlib.import_module(mod)
try:
    r = getattr(m, sys.argv[4] if len(sys.argv) > 4 else "serve")(*args)
    if asyncio.iscoroutine(r): asyncio.run(r)
except ms.Captured:
    pass
tools = asyncio.run(ms.CAPTURED["list_tools"]())
print(json.dumps({"tools": [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools]}, indent=2, ensure_ascii=False))
