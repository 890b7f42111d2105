"""Writes baracuda's one golden-data format (docs/testing.md), read by tests/support/golden.hpp.

A file tests/data/<family>_golden.json holds the generator, the versions of the tools that computed the values,
notes (what was checked, where a tool was worked around) and the cases. Floating values are hex bit patterns
(strings), never JSON numbers, so that no decimal round trip can change a bit; integers are JSON numbers.
One case per line, so that a regeneration's diff shows which cases changed.
"""

import json
import struct

FORMAT = "baracuda-golden/1"

# Hex digits of each floating kind's bit pattern; every other kind (s8, u8, s32, s64, u32, bool) is an integer.
FLOAT_DIGITS = {"f16": 4, "bf16": 4, "f32": 8, "f64": 16, "fp8e4m3": 2, "fp8e5m2": 2}
INT_KINDS = {"bool", "s8", "u8", "s32", "s64", "u32"}


def tensor(kind, data, shape=None):
    """A tensor of `kind`: `data` is the elements' bit patterns (floating kinds) or values (integer kinds),
    row-major; `shape` defaults to [len(data)]."""
    data = [int(v) for v in data]
    shape = [len(data)] if shape is None else [int(d) for d in shape]
    n = 1
    for d in shape:
        n *= d
    assert n == len(data), (kind, shape, len(data))
    if kind in FLOAT_DIGITS:
        w = FLOAT_DIGITS[kind]
        assert all(0 <= b < 16 ** w for b in data), kind
        return {"kind": kind, "shape": shape, "bits": ["%0*x" % (w, b) for b in data]}
    assert kind in INT_KINDS, kind
    return {"kind": kind, "shape": shape, "values": data}


def f64(x):
    """A floating parameter: the hex bits of the double x."""
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def case(name, params, tensors):
    return {"name": name, "params": params, "tensors": tensors}


def write(path, generator, tools, notes, cases):
    """Writes the file: the header fields, then one case per line (compact)."""
    head = {"format": FORMAT, "generator": generator, "tools": tools, "notes": list(notes)}
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    text = json.dumps(head, indent=1)[:-2] + ',\n "cases": [\n'
    text += ",\n".join("  " + json.dumps(c, separators=(",", ":")) for c in cases)
    text += "\n ]\n}\n"
    json.loads(text)  # well-formed
    with open(path, "w") as f:
        f.write(text)
