"""Regenerates a vendored excerpt of a published MCP schema (mcp-schemas/<version>.json).

    python3 excerpt.py <published schema.json> <version> <commit> <Definition>...

Writes to stdout the definitions named and every definition they reference, with their
`description` keywords left out; validation keywords are unchanged. The tests add
`additionalProperties: false` when they load an excerpt (dual-testkit's src/mcp/schema.rs).
"""

import json
import sys


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def refs(node, found):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            refs(value, found)
    elif isinstance(node, list):
        for value in node:
            refs(value, found)


def main():
    path, version, commit, *roots = sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    key = "$defs" if "$defs" in schema else "definitions"
    definitions = schema[key]
    wanted, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.add(name)
        found = set()
        refs(definitions[name], found)
        todo.extend(found - wanted)
    excerpt = {
        "$comment": f"Excerpt of the published MCP schema schema/{version}/schema.json "
        f"(github.com/modelcontextprotocol/modelcontextprotocol, commit {commit}): the definitions "
        "a tool server's results use, copied with their descriptions left out. Validation keywords "
        "are unchanged.",
        "$schema": schema["$schema"],
        key: {name: strip(definitions[name]) for name in sorted(wanted)},
    }
    json.dump(excerpt, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


main()
