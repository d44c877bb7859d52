"""JSON the C++ library rendered, reshaped into pandas DataFrames.

Nothing is computed here: every number is the library's, as the command
line's `-output json` writes it. A tree (a view, a diff) becomes one row per
displayed node in display order (pre-order), with its depth (the root is 0),
its path (the names from the root's child down to it, joined with ';', as in
folded stacks) and one column per field: an attribute given as an object
({"self": 1, "total": 5}) gives one column per key (micros_self,
micros_total).
"""

import json

import pandas as pd

PATH_SEPARATOR = ";"


def _flatten(node, depth, path, rows):
    row = {"name": node["name"], "depth": depth, "path": path}
    for key, value in node.items():
        if key in ("name", "children"):
            continue
        if isinstance(value, dict):
            for sub, v in value.items():
                row["%s_%s" % (key, sub)] = v
        else:
            row[key] = value
    rows.append(row)


def tree_rows(root):
    """The rows of a rendered tree, pre-order, without recursion."""
    rows = []
    todo = [(root, 0, root["name"])]
    while todo:
        node, depth, path = todo.pop()
        _flatten(node, depth, path, rows)
        children = node.get("children") or []
        for child in reversed(children):
            child_path = (child["name"] if depth == 0 else
                          path + PATH_SEPARATOR + child["name"])
            todo.append((child, depth + 1, child_path))
    return rows


def tree_frame(text):
    """A view's or a diff's JSON: the tree as rows; the rest in .attrs."""
    doc = json.loads(text)
    root = doc.pop("root", None)
    frame = pd.DataFrame(tree_rows(root) if root is not None else [])
    frame.attrs.update(doc)
    return frame


def list_frame(text, key):
    """A JSON object with a list of records under `key`: the records as
    rows, the other fields in .attrs."""
    doc = json.loads(text)
    frame = pd.DataFrame(doc.pop(key, []))
    frame.attrs.update(doc)
    return frame
