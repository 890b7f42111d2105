"""The functional API's plans, selected once per descriptor and device and kept in a bounded LRU cache."""

import collections
import threading

_lock = threading.Lock()
_plans = collections.OrderedDict()
_capacity = 256
_stats = {"hits": 0, "misses": 0}


def plan(plan_class, key, stream, descriptor):
    """The plan of `plan_class` for `descriptor` on `stream`'s device; `key` identifies the descriptor."""
    full = (plan_class.__name__, key, stream.device, stream.device_index)
    with _lock:
        found = _plans.get(full)
        if found is not None:
            _plans.move_to_end(full)
            _stats["hits"] += 1
            return found
        _stats["misses"] += 1
    selected = plan_class.select(stream, descriptor)  # raises on a bad problem: nothing is cached
    with _lock:
        _plans[full] = selected
        while len(_plans) > _capacity:
            _plans.popitem(last=False)
    return selected


def set_capacity(n):
    """Keeps at most `n` plans (0: none)."""
    global _capacity
    if n < 0:
        raise ValueError("the plan cache's capacity cannot be negative")
    with _lock:
        _capacity = n
        while len(_plans) > _capacity:
            _plans.popitem(last=False)


def clear():
    with _lock:
        _plans.clear()
        _stats.update(hits=0, misses=0)


def info():
    """{'size', 'capacity', 'hits', 'misses'}."""
    with _lock:
        return {"size": len(_plans), "capacity": _capacity, **_stats}
