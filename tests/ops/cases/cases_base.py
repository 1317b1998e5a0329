"""The MSCGraph case builder shared by cases.py and cases_ops.py (see cases.py)."""
import collections

import torch

Case = collections.namedtuple("Case", "graph weights inputs outputs")


def _dtype(t):
    return {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64",
            torch.int32: "int32", torch.bool: "bool", torch.float16: "float16"}[t.dtype]


class Builder:
    """Builds an MSCGraph (as MSC's JSON) while running the torch reference on seeded data."""

    def __init__(self, name="main", seed=0):
        self.name = name
        self.gen = torch.Generator().manual_seed(seed)
        self.nodes, self.inputs, self.prims = [], [], []
        self.values = {}        # tensor name -> torch value
        self.meta = {}          # tensor name -> (shape as written, prims, layout)
        self.weights = {}       # weight name -> np.ndarray
        self.weight_count = 0

    def _rand(self, shape, dtype=torch.float32):
        return torch.randn(*shape, generator=self.gen).to(dtype)

    def _tensor(self, name, value, layout="", alias="", dyn=None):
        shape = list(value.shape)
        prims = []
        if dyn:
            prims = [str(d) for d in shape]
            for axis, prim in dyn.items():
                shape[axis] = -1
                prims[axis] = prim
        self.values[name] = value
        self.meta[name] = (shape, prims, layout)
        return {"name": name, "alias": alias, "dtype": _dtype(value), "layout": layout, "shape": shape,
                "prims": prims}

    def prim(self, name, optype, parents=(), **attrs):
        self.prims.append({"index": len(self.prims), "name": name, "optype": optype, "parents": list(parents),
                           "attrs": {k: str(v) for k, v in attrs.items()}})

    def input(self, name, shape, layout="", dtype=torch.float32, dyn=None, value=None):
        value = self._rand(shape, dtype) if value is None else value
        out = self._tensor(name + ":0", value, layout, alias=name, dyn=dyn)
        self.nodes.append({"index": len(self.nodes), "name": name, "shared_ref": "", "optype": "input",
                           "parents": [], "inputs": [], "outputs": [out], "attrs": {}, "weights": {}})
        self.inputs.append(out["name"])
        return out["name"]

    def weight(self, shape, layout="", alias="", value=None, name=None):
        if name is None:
            name = "const" if self.weight_count == 0 else "const_%d" % self.weight_count
        self.weight_count += 1
        value = self._rand(shape) if value is None else value
        self.weights[name] = value
        return {"name": name, "alias": alias, "dtype": _dtype(value), "layout": layout,
                "shape": list(value.shape), "prims": []}

    def node(self, name, optype, inputs, fn, attrs=None, weights=None, layout="", dyn=None, n_out=None):
        """Adds a node; fn(*input values, **{role: weight value}) is its torch reference."""
        weights = weights or {}
        args = [self.values[i] for i in inputs]
        w = {role: self.weights[t["name"]] for role, t in weights.items()}
        with torch.no_grad():
            result = fn(*args, **w)
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        layouts = layout if isinstance(layout, list) else [layout] * len(results)
        dyns = dyn if isinstance(dyn, list) else [dyn] * len(results)
        outs = [self._tensor("%s:%d" % (name, k), v, layouts[k], dyn=dyns[k]) for k, v in enumerate(results)]
        parents = []
        for i in inputs:
            p = i.rsplit(":", 1)[0]
            if p not in parents:
                parents.append(p)
        self.nodes.append({"index": len(self.nodes), "name": name, "shared_ref": "", "optype": optype,
                           "parents": parents, "inputs": list(inputs), "outputs": outs,
                           "attrs": {k: str(v) for k, v in (attrs or {}).items()}, "weights": weights})
        return [o["name"] for o in outs] if len(outs) > 1 else outs[0]["name"]

    def finish(self, outputs, aliases=None):
        names = [o["name"] for n in self.nodes for o in n["outputs"]]
        for k, out in enumerate(outputs):
            assert out in names, out
            for n in self.nodes:
                for o in n["outputs"]:
                    if o["name"] == out and not o["alias"]:
                        o["alias"] = (aliases or {}).get(out) or (n["name"] if len(n["outputs"]) == 1 else out.replace(":", "_"))
        graph = {"name": self.name, "inputs": list(self.inputs), "outputs": list(outputs), "nodes": self.nodes,
                 "prims": self.prims}
        to_np = lambda v: v.detach().numpy().copy()  # noqa: E731
        return Case(graph, {k: to_np(v) for k, v in self.weights.items()},
                    {k: to_np(self.values[k]) for k in self.inputs}, {k: to_np(self.values[k]) for k in outputs})


