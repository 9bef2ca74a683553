"""Extract FastMCP-style tool definitions from Python source without running it.

For each function decorated with @X.tool(...) (mcp.tool, app.tool, server.tool)
gives name, description and an inputSchema the way the MCP Python SDK's
FastMCP derives them (pydantic model of the parameters: title-cased titles,
JSON types, defaults, required; Annotated[..., Field(description=...)] and
Field(...) defaults give descriptions). Context-typed parameters are skipped.
"""
import ast, json, sys

TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
         "dict": "object", "Dict": "object", "list": "array", "List": "array", "Any": None}

def title(n):
    return " ".join(p.capitalize() for p in n.split("_") if p) or n

def lit(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None

def type_schema(ann):
    if ann is None:
        return {}
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except Exception:
            return {}
    if isinstance(ann, ast.Name):
        if ann.id in TYPES:
            t = TYPES[ann.id]
            if t == "array":
                return {"items": {}, "type": "array"}
            if t == "object":
                return {"additionalProperties": True, "type": "object"}
            return {"type": t} if t else {}
        return {}
    if isinstance(ann, ast.Attribute):
        return {}
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        a, b = type_schema(ann.left), type_schema(ann.right)
        if isinstance(ann.right, ast.Constant) and ann.right.value is None:
            return {"anyOf": [a, {"type": "null"}]}
        return {"anyOf": [a, b]}
    if isinstance(ann, ast.Subscript):
        base = ann.value.id if isinstance(ann.value, ast.Name) else getattr(ann.value, "attr", "")
        sl = ann.slice
        args = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if base == "Optional":
            return {"anyOf": [type_schema(args[0]), {"type": "null"}]}
        if base == "Union":
            return {"anyOf": [type_schema(a) for a in args]}
        if base in ("List", "list", "Sequence"):
            return {"items": type_schema(args[0]), "type": "array"}
        if base in ("Dict", "dict"):
            return {"additionalProperties": type_schema(args[1]) if len(args) > 1 else True, "type": "object"}
        if base == "Literal":
            vals = [lit(a) for a in args]
            s = {"enum": vals}
            if all(isinstance(v, str) for v in vals):
                s["type"] = "string"
            return s
        if base == "Annotated":
            s = dict(type_schema(args[0]))
            for extra in args[1:]:
                s.update(field_info(extra))
            return s
    return {}

def field_info(node):
    """Field(description=..., default=...) → schema bits."""
    out = {}
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Field":
        for kw in node.keywords:
            if kw.arg in ("description", "title", "default", "examples"):
                v = lit(kw.value)
                if v is not None:
                    out[kw.arg] = v
        if node.args:
            v = lit(node.args[0])
            if v is not None and v is not Ellipsis:
                out["default"] = v
    return out

def is_context(ann):
    s = ast.unparse(ann) if ann is not None else ""
    return "Context" in s

def schema_of(fn):
    props, req = {}, []
    a = fn.args
    params = a.posonlyargs + a.args
    defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(params, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    for p, d in pairs:
        if p.arg in ("self", "cls") or is_context(p.annotation):
            continue
        s = dict(type_schema(p.annotation))
        s["title"] = s.get("title", title(p.arg))
        if d is not None:
            fi = field_info(d)
            if fi:
                s.update(fi)
                if "default" not in fi:
                    req.append(p.arg)
            else:
                v = lit(d)
                if v is not None or (isinstance(d, ast.Constant) and d.value is None):
                    s["default"] = v
        else:
            req.append(p.arg)
        props[p.arg] = dict(sorted(s.items()))
    out = {"properties": props}
    if req:
        out["required"] = req
    out["title"] = fn.name + "Arguments"
    out["type"] = "object"
    return out

def extract(src, path=""):
    tree = ast.parse(src)
    tools = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            f = dec.func if call else dec
            if isinstance(f, ast.Attribute) and f.attr == "tool":
                kw = {k.arg: lit(k.value) for k in (call.keywords if call else [])}
                name = kw.get("name") or (lit(call.args[0]) if call and call.args and isinstance(lit(call.args[0]), str) else None) or node.name
                desc = kw.get("description")
                if desc is None:
                    desc = ast.get_docstring(node, clean=False) or ""
                t = {"name": name, "description": desc, "inputSchema": schema_of(node), "line": node.lineno, "func": node.name}
                if isinstance(kw.get("annotations"), dict):
                    t["annotations"] = kw["annotations"]
                if isinstance(kw.get("title"), str):
                    t["title"] = kw["title"]
                tools.append(t)
    return tools

if __name__ == "__main__":
    for p in sys.argv[1:]:
        src = open(p, encoding="utf-8", errors="replace").read()
        try:
            ts = extract(src, p)
        except SyntaxError as e:
            print(json.dumps({"file": p, "error": str(e)})); continue
        for t in ts:
            t["file"] = p
            print(json.dumps(t, ensure_ascii=False))

def extract_literals(src):
    """types.Tool(name=..., description=..., inputSchema=...) calls and
    {"name":..., "description":..., "inputSchema": ...} dicts."""
    tree = ast.parse(src)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fname = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if fname.endswith("Tool") and fname[0].isupper():
                kw = {k.arg: k.value for k in node.keywords}
                if "name" in kw and "description" in kw:
                    name, desc = lit(kw["name"]), lit(kw["description"])
                    if desc is None and isinstance(kw["description"], ast.JoinedStr):
                        desc = ast.unparse(kw["description"])
                    sch = lit(kw.get("inputSchema") or kw.get("input_schema") or ast.Constant(None))
                    out.append({"name": name, "description": desc, "inputSchema": sch, "line": node.lineno, "kind": "Tool()"})
        if isinstance(node, ast.Dict):
            keys = [lit(k) if k is not None else None for k in node.keys]
            if "name" in keys and "description" in keys and any(k in keys for k in ("inputSchema", "input_schema", "parameters")):
                d = {}
                for k, v in zip(keys, node.values):
                    if isinstance(k, str):
                        d[k] = lit(v)
                out.append({"name": d.get("name"), "description": d.get("description"),
                            "inputSchema": d.get("inputSchema", d.get("input_schema", d.get("parameters"))), "line": node.lineno, "kind": "dict"})
    return out

if __name__ == "__main__" and "--literals" in sys.argv:
    pass
