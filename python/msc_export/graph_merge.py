"""Merging MSCGraph JSON dicts into one graph, so many small graphs share one Vulkan build.

prefix_graph(graph, prefix): every node, tensor and weight name (and alias) prefixed; tensor names
``"<node>:<i>"`` become ``"<prefix><node>:<i>"``. merge_graphs([(prefix, graph), ...]): one graph
holding all of them, nodes re-indexed, inputs/outputs concatenated in order. Graphs with prims
(dynamic dims) cannot be merged (their prim names would collide).
"""
import copy

__all__ = ["prefix_graph", "merge_graphs"]


def prefix_graph(graph, prefix):
    """The graph with every node, tensor and weight name prefixed (inputs split on the last ':')."""
    g = copy.deepcopy(graph)
    rename = lambda t: prefix + t  # noqa: E731  tensor "<node>:<i>" -> "<prefix><node>:<i>"
    for node in g["nodes"]:
        node["name"] = prefix + node["name"]
        node["parents"] = [prefix + p for p in node["parents"]]
        node["inputs"] = [rename(t) for t in node["inputs"]]
        if node.get("shared_ref"):
            node["shared_ref"] = prefix + node["shared_ref"]
        for t in node["outputs"]:
            t["name"] = rename(t["name"])
            t["alias"] = prefix + t["alias"] if t["alias"] else ""
        for t in node.get("weights", {}).values():
            t["name"] = prefix + t["name"]
            t["alias"] = prefix + t["alias"] if t["alias"] else ""
    g["inputs"] = [rename(t) for t in g["inputs"]]
    g["outputs"] = [rename(t) for t in g["outputs"]]
    return g


def merge_graphs(parts, name="merged"):
    """[(prefix, graph dict)] -> one graph dict. Raises ValueError for a graph with prims."""
    merged = {"name": name, "inputs": [], "outputs": [], "nodes": [], "prims": []}
    for prefix, graph in parts:
        if graph.get("prims"):
            raise ValueError("graph %r has prims (dynamic dims) and cannot be merged" % graph.get("name"))
        g = prefix_graph(graph, prefix)
        for node in g["nodes"]:
            node["index"] = len(merged["nodes"])
            merged["nodes"].append(node)
        merged["inputs"] += g["inputs"]
        merged["outputs"] += g["outputs"]
    return merged
