"""Re-render the Saksham tool_registry JSON in the file's own layout (2-space indent,
inline 'required' lists) to recover each tool's line number and check the transcription
against the file-index character count."""
import json
def q(s): return json.dumps(s, ensure_ascii=False)
def render(tools):
    L = ["["]; lines = {}
    for i, t in enumerate(tools):
        f = t["function"]
        L += ["  {", '    "type": "function",', '    "function": {']
        lines[f["name"]] = len(L) + 1
        L += [f'      "name": {q(f["name"])},', f'      "description": {q(f["description"])},',
              '      "parameters": {', '        "type": "object",', '        "properties": {']
        props = list(f["parameters"]["properties"].items())
        for j, (k, v) in enumerate(props):
            L.append(f'          {q(k)}: {{')
            if v["type"] == "array":
                L += ['            "type": "array",', '            "items": {', '              "type": "string"', '            },',
                      f'            "description": {q(v["description"])}']
            else:
                L += [f'            "type": {q(v["type"])},', f'            "description": {q(v["description"])}']
            L.append('          }' + ("," if j < len(props) - 1 else ""))
        L += ['        },', '        "required": [' + ", ".join(q(r) for r in f["parameters"]["required"]) + ']',
              '      }', '    }', '  }' + ("," if i < len(tools) - 1 else "")]
    L.append("]")
    return "\n".join(L) + "\n", lines
if __name__ == "__main__":
    for n, exp in [("explicit", 7742), ("implicit", 7841)]:
        txt, lines = render(json.load(open(f"/tmp/pois7/index/saksham_poisoned_{n}.json")))
        print(n, len(txt), exp, lines)
