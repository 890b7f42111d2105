#!/usr/bin/env python3
"""Resource usage of every CUDA kernel of the baracuda library, as ptxas reported it in the build, plus a
128-bit-access check of its PTX.

The build compiles the library's CUDA sources with `--resource-usage` through tools/ptxas_log.sh, which
files ptxas's lines (registers, spill stores/loads, stack, shared memory per kernel and architecture) next
to each object as <object>.ptxas.log; this script reads those logs, so no kernel is compiled for ptxas a
second time. The vec128 column needs the PTX of the highest configured architecture: it is read from the
object when the build embeds it uncompressed (BARACUDA_FATBIN_NO_COMPRESS, as the `ci` preset does);
otherwise (compressed, or an object built without that PTX) the source is compiled to PTX once more (through
ccache when the build uses it). Each kernel's body is searched for 128-bit global accesses (ld/st.global .v4
of 32-bit, .v2 of 64-bit, or .b128).

Writes the full report (one row per kernel and architecture) and a summary (one row per source and
architecture; docs/perf/ptxas-summary.txt is its checked-in copy). With --fail-on-spills, exits 1 when a
kernel spills. Run it through the build: `cmake --build <dir> --target ptxas-report`.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

# Flags of the build's compile command that the PTX compile replaces (with their argument, if separate).
DROP_WITH_ARG = {"-o", "-MF", "-MT", "-MQ", "-gencode", "--generate-code", "-arch", "--gpu-architecture",
                 "-code", "--gpu-code"}
DROP_PREFIX = ("--generate-code", "-gencode", "-arch=", "--gpu-architecture", "-code=", "--gpu-code",
               "-MD", "-MMD", "-MF", "-MT", "-Xptxas", "--resource-usage")
DROP_EXACT = {"-c", "--compile", "-cubin", "-ptx", "-fatbin", "-dc", "-rdc=true", "--relocatable-device-code=true"}

VEC128 = re.compile(r"\b(ld|st)\.global(?:\.[a-z0-9:]+)*?\.(?:v4\.[bfsu]32|v2\.[bfsu]64|b128)\b")
ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", re.M)

PTXAS_FUNC = re.compile(r"ptxas info\s*:\s*Compiling entry function '([^']+)' for '(sm_\w+)'")
PTXAS_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_USED = re.compile(r"ptxas info\s*:\s*Used (\d+) registers(.*)")
SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(text):
    """{(mangled kernel, arch): {regs, spill_st, spill_ld, stack, smem}} from ptxas's `-v` lines."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = PTXAS_FUNC.search(line)
        if m:
            current = kernels.setdefault((m.group(1), m.group(2)),
                                         {"regs": 0, "spill_st": 0, "spill_ld": 0, "stack": 0, "smem": 0})
            continue
        if current is None:
            continue
        m = PTXAS_PROPS.search(line)
        if m:
            current["stack"], current["spill_st"], current["spill_ld"] = map(int, m.groups())
            continue
        m = PTXAS_USED.search(line)
        if m:
            current["regs"] = int(m.group(1))
            s = SMEM.search(m.group(2))
            current["smem"] = int(s.group(1)) if s else 0
    return kernels


def parse_vec128(ptx_text):
    """{mangled kernel: True when its PTX has a 128-bit global load or store}."""
    starts = [(m.start(), m.group(1)) for m in ENTRY.finditer(ptx_text)]
    result = {}
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(ptx_text)
        result[name] = bool(VEC128.search(ptx_text, pos, end))
    return result


def compile_commands_by_object(path):
    """{absolute object path: (directory, argv, absolute source path)} for the CUDA compiles."""
    with open(path) as f:
        entries = json.load(f)
    result = {}
    for e in entries:
        args = e.get("arguments") or shlex.split(e["command"])
        if "-o" not in args[:-1]:
            continue
        obj = os.path.normpath(os.path.join(e["directory"], args[args.index("-o") + 1]))
        src = os.path.normpath(os.path.join(e["directory"], e["file"]))
        result[obj] = (e["directory"], args, src)
    return result


def ptx_command(args, source, arch, out, ccache):
    """The build's compile of `source` turned into a PTX-only compile for `arch`."""
    flags, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in DROP_WITH_ARG:
            skip = True
            continue
        if a in DROP_EXACT or a.startswith(DROP_PREFIX) or os.path.realpath(a) == os.path.realpath(source):
            continue
        flags.append(a)
    return [*([ccache] if ccache else []), args[0], *flags, f"-arch=compute_{arch}", "-ptx", source, "-o", out]


PTX_HEAD = re.compile(rb"\.version [0-9.]+\s*\n\.target\s+sm_(\w+)")


def embedded_ptx(obj, arch):
    """The PTX for compute_`arch` that an object holds as plain text (an uncompressed fatbinary), or None."""
    with open(obj, "rb") as f:
        data = f.read()
    for m in PTX_HEAD.finditer(data):
        if m.group(1).decode() == str(arch):
            end = data.find(b"\0", m.start())
            return data[m.start():end if end >= 0 else len(data)].decode("ascii", "replace")
    return None


def vec128_of(obj, arch, directory, cmd, out):
    ptx = embedded_ptx(obj, arch)
    if ptx is not None:
        return parse_vec128(ptx)
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"PTX compile failed:\n{shlex.join(cmd)}\n{r.stderr}")
    with open(out) as f:
        return parse_vec128(f.read())


def demangle(names):
    if not names:
        return {}
    try:
        r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return dict(zip(names, r.stdout.splitlines()))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def shorten(name):
    """A demangled name without the return type and baracuda's namespaces (the report is read by people)."""
    name = re.sub(r"^void ", "", name)
    return re.sub(r"\bbaracuda::(device_cuda::)?", "", name)


def nvcc_version(nvcc):
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release [\d.]+, (V[\d.]+)", out)
        return m.group(1) if m else "unknown"
    except OSError:
        return "unknown"


STUB = re.compile(r"^// Generated by baracuda_add_kernel_sources \S+: (\S+) for ")


def label(source, source_dir, build_dir):
    """A source's name in the report: relative to the repository; for a stub that CMake generated for a kernel
    unit (cmake/BaracudaKernels.cmake), the unit's; `<build>/…` for other generated files."""
    try:
        with open(source) as f:
            m = STUB.match(f.readline())
        if m:
            return m.group(1)
    except OSError:
        pass
    for root, prefix in ((source_dir, ""), (build_dir, "<build>/")):
        rel = os.path.relpath(source, root)
        if not rel.startswith(".."):
            return prefix + rel
    return source


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True, help="repository root (paths in the report are relative to it)")
    ap.add_argument("--ptx-arch", required=True, help="architecture of the PTX compile for vec128, e.g. 90")
    ap.add_argument("--ccache", default="", help="ccache to run the PTX compiles through (empty: none)")
    ap.add_argument("--work", required=True, help="scratch directory for the PTX")
    ap.add_argument("--out", required=True, help="the full report")
    ap.add_argument("--summary", required=True, help="the summary per source and architecture")
    ap.add_argument("--fail-on-spills", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel PTX compiles (default: all cores)")
    a = ap.parse_args()

    build_dir = os.path.realpath(a.build_dir)
    commands = compile_commands_by_object(os.path.join(build_dir, "compile_commands.json"))
    logs = sorted(os.path.join(d, f) for d, _, fs in os.walk(build_dir) for f in fs if f.endswith(".o.ptxas.log"))
    units = []  # (label, usage, directory, argv, source, object)
    for log in logs:
        obj = os.path.normpath(log[: -len(".ptxas.log")])
        if obj not in commands:
            continue  # a stale log of an object the build no longer has
        directory, args, source = commands[obj]
        with open(log) as f:
            usage = parse_ptxas(f.read())
        units.append((label(source, a.source_dir, build_dir), usage, directory, args, source, obj))
    if not units:
        sys.exit(f"ptxas_report: no <object>.ptxas.log under {build_dir}: build the library first "
                 "(BARACUDA_CUDA_KERNELS=ON)")

    work = os.path.abspath(a.work)  # the compiles run in their build directories
    os.makedirs(work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = []
        for i, (_, _, directory, args, source, obj) in enumerate(units):
            out = os.path.join(work, f"{i}.ptx")
            futures.append(pool.submit(vec128_of, obj, a.ptx_arch, directory,
                                       ptx_command(args, source, a.ptx_arch, out, a.ccache), out))
        try:
            vec = [f.result() for f in futures]
        except RuntimeError as e:
            sys.exit(f"ptxas_report: {e}")

    rows = []
    for (name, usage, *_), v in zip(units, vec):
        names = demangle(sorted({k for k, _ in usage}))
        for (mangled, arch), u in sorted(usage.items(), key=lambda kv: (kv[0][1], names[kv[0][0]])):
            rows.append((name, arch, u["regs"], u["spill_st"], u["spill_ld"], u["stack"], u["smem"],
                         "yes" if v.get(mangled) else "no", shorten(names[mangled])))
    rows.sort(key=lambda r: (r[0], r[1], r[-1]))

    spills = [r for r in rows if r[3] or r[4]]
    archs = sorted({r[1] for r in rows})
    header = [
        "# ptxas report: resource usage of every kernel of the baracuda library, from its build",
        f"# nvcc {nvcc_version(units[0][3][0])}; architectures {';'.join(archs)}; "
        "regenerate: cmake --build <build-dir> --target ptxas-report",
        "# regs = registers per thread; spill_st/spill_ld/stack/smem in bytes (smem: static shared memory);",
        f"# vec128 = the kernel's PTX for compute_{a.ptx_arch} has a 128-bit global load or store "
        "(ld/st.global .v4.b32, .v2.b64 or .b128).",
        f"# {len(rows)} kernels; {len(spills)} with spills.",
        "",
    ]
    groups = {}
    for r in rows:
        groups.setdefault((r[0], r[1]), []).append(r)
    sw = max(len("source"), *(len(src) for src, _ in groups)) + 2
    summary = ["## summary per source and architecture", "",
               f"{'source':<{sw}}{'arch':<7}{'kernels':>8}{'max_regs':>10}{'spilling':>10}{'vec128':>8}"]
    for (src, arch), g in sorted(groups.items()):
        summary.append(f"{src:<{sw}}{arch:<7}{len(g):>8}{max(r[2] for r in g):>10}"
                       f"{sum(1 for r in g if r[3] or r[4]):>10}{sum(1 for r in g if r[7] == 'yes'):>8}")

    head = ("source", "arch", "regs", "spill_st", "spill_ld", "stack", "smem", "vec128", "kernel")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head) - 1)]
    kernels = ["", "## kernels", "", "  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  " + head[-1]]
    kernels += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]

    with open(a.out, "w") as f:
        f.write("\n".join(header + summary + kernels) + "\n")
    with open(a.summary, "w") as f:
        f.write("\n".join(header + summary) + "\n")
    print(f"ptxas_report: {len(rows)} kernels, {len(spills)} with spills -> {a.out}, {a.summary}")
    for r in spills:
        print(f"  spills: {r[0]} {r[1]} {r[-1]} (stores {r[3]} B, loads {r[4]} B)")
    if spills and a.fail_on_spills:
        sys.exit(1)


if __name__ == "__main__":
    main()
