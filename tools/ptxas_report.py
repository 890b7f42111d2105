#!/usr/bin/env python3
"""Resource usage of every CUDA kernel baracuda builds, from ptxas, plus a 128-bit-access check of its PTX.

For each src/ops/<family>/cuda*.cu (the family's kernels instantiated for the cuda device) and each
architecture, the file is compiled again with the exact flags of the build (taken from
compile_commands.json) to a cubin with `-Xptxas -v` (registers, spill stores/loads, stack, shared memory per
kernel), keeping the PTX it was assembled from, where each kernel's body is searched for 128-bit global
accesses (ld/st.global .v4 of 32-bit, .v2 of 64-bit, or .b128).

Run it through the build: `cmake --build <dir> --target ptxas-report` writes <dir>/ptxas-report.txt.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

# Flags of the build's compile command that this script replaces (with their argument, if separate).
DROP_WITH_ARG = {"-o", "-MF", "-MT", "-MQ", "-gencode", "--generate-code", "-arch", "--gpu-architecture",
                 "-code", "--gpu-code"}
DROP_PREFIX = ("-o", "--generate-code", "-gencode", "-arch=", "--gpu-architecture", "-code=", "--gpu-code",
               "-MD", "-MMD", "-MF", "-MT", "-Xptxas", "--resource-usage")
DROP_EXACT = {"-c", "--compile", "-cubin", "-ptx", "-fatbin", "-dc", "-rdc=true", "--relocatable-device-code=true"}

VEC128 = re.compile(r"\b(ld|st)\.global(?:\.[a-z0-9:]+)*?\.(?:v4\.[bfsu]32|v2\.[bfsu]64|b128)\b")
ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", re.M)

PTXAS_FUNC = re.compile(r"ptxas info\s*:\s*Compiling entry function '([^']+)' for '(sm_\w+)'")
PTXAS_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_USED = re.compile(r"ptxas info\s*:\s*Used (\d+) registers(.*)")
SMEM = re.compile(r"(\d+) bytes smem")


def build_flags(compile_commands, source):
    """The build's nvcc command for `source`, minus output, architecture and dependency flags."""
    src = os.path.realpath(source)
    for entry in compile_commands:
        path = entry["file"]
        if not os.path.isabs(path):
            path = os.path.join(entry["directory"], path)
        if os.path.realpath(path) != src:
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        out, skip = [], False
        for a in args[1:]:
            if skip:
                skip = False
                continue
            if a in DROP_WITH_ARG:
                skip = True
                continue
            if a in DROP_EXACT or a.startswith(DROP_PREFIX) or os.path.realpath(a) == src:
                continue
            out.append(a)
        return args[0], entry["directory"], out
    return None


def shorten(name):
    """A demangled name without the return type and baracuda's namespaces (the report is read by people)."""
    name = re.sub(r"^void ", "", name)
    return re.sub(r"\bbaracuda::(device_cuda::)?", "", name)


def demangle(names):
    if not names:
        return {}
    try:
        r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return dict(zip(names, r.stdout.splitlines()))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def stem(source):
    """'affine.cuda' for src/ops/affine/cuda.cu: a unique name for the scratch files of one source."""
    return f"{os.path.basename(os.path.dirname(source))}.{os.path.splitext(os.path.basename(source))[0]}"


def parse_ptxas(output):
    """{mangled kernel: {regs, spill_st, spill_ld, stack, smem}} from the output of `-Xptxas -v`."""
    kernels, current = {}, None
    for line in output.splitlines():
        m = PTXAS_FUNC.search(line)
        if m:
            current = kernels.setdefault(m.group(1), {"regs": 0, "spill_st": 0, "spill_ld": 0, "stack": 0, "smem": 0})
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


def analyse(nvcc, directory, flags, source, arch, work):
    """One nvcc run for (source, arch): a cubin with `-Xptxas -v`, keeping the PTX it was assembled from.
    Returns (usage per kernel, vec128 per kernel)."""
    keep = os.path.join(work, f"{stem(source)}.sm_{arch}")
    shutil.rmtree(keep, ignore_errors=True)
    os.makedirs(keep)
    cmd = [nvcc, *flags, f"-arch=sm_{arch}", "-cubin", "-Xptxas", "-v", "--keep", "--keep-dir", keep, source,
           "-o", os.path.join(keep, "kernels.cubin")]
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compiling {source} for sm_{arch} failed:\n{shlex.join(cmd)}\n{r.stderr}")
    ptx_files = [f for f in os.listdir(keep) if f.endswith(".ptx")]
    if len(ptx_files) != 1:
        raise RuntimeError(f"expected one PTX file from {source} for sm_{arch} in {keep}, found {ptx_files}")
    with open(os.path.join(keep, ptx_files[0])) as f:
        vec = parse_vec128(f.read())
    return parse_ptxas(r.stdout + r.stderr), vec


def nvcc_version(nvcc):
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release [\d.]+, (V[\d.]+)", out)
        return m.group(1) if m else "unknown"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile-commands", required=True)
    ap.add_argument("--archs", required=True, help="semicolon-separated, e.g. 80;90")
    ap.add_argument("--source-dir", required=True, help="repository root (paths in the report are relative to it)")
    ap.add_argument("--work", required=True, help="scratch directory for cubins and PTX")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel nvcc runs (default: all cores)")
    ap.add_argument("sources", nargs="+")
    a = ap.parse_args()

    with open(a.compile_commands) as f:
        commands = json.load(f)
    os.makedirs(a.work, exist_ok=True)
    archs = [re.sub(r"-(real|virtual)$", "", x) for x in a.archs.replace(",", ";").split(";") if x]

    tasks, nvcc_used = [], None
    for source in sorted(a.sources):
        found = build_flags(commands, source)
        if found is None:
            sys.exit(f"ptxas_report: {source} is not in {a.compile_commands} (configure with BARACUDA_CUDA_KERNELS=ON)")
        nvcc, directory, flags = found
        nvcc_used = nvcc
        for arch in archs:
            tasks.append((source, arch, nvcc, directory, flags))

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(analyse, nvcc, directory, flags, os.path.abspath(source), arch, a.work)
                   for source, arch, nvcc, directory, flags in tasks]
        try:
            results = [f.result() for f in futures]
        except RuntimeError as e:
            sys.exit(f"ptxas_report: {e}")

    rows = []
    for (source, arch, *_), (usage, vec) in zip(tasks, results):
        rel = os.path.relpath(source, a.source_dir)
        names = demangle(sorted(usage))
        for mangled in sorted(usage, key=lambda n: names[n]):
            u = usage[mangled]
            rows.append((rel, f"sm_{arch}", u["regs"], u["spill_st"], u["spill_ld"], u["stack"], u["smem"],
                         "yes" if vec.get(mangled) else "no", shorten(names[mangled])))

    head = ("source", "arch", "regs", "spill_st", "spill_ld", "stack", "smem", "vec128", "kernel")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head) - 1)]
    spills = [r for r in rows if r[3] or r[4]]
    lines = [
        "# ptxas report: resource usage of every kernel in src/ops/*/cuda*.cu",
        f"# nvcc {nvcc_version(nvcc_used)}; architectures {';'.join(archs)}; "
        "regenerate: cmake --build <build-dir> --target ptxas-report",
        "# regs = registers per thread; spill_st/spill_ld/stack/smem in bytes (smem: static shared memory);",
        "# vec128 = the kernel's PTX has a 128-bit global load or store (ld/st.global .v4.b32, .v2.b64 or .b128).",
        f"# {len(rows)} kernels; {len(spills)} with spills.",
        "",
        "## summary per source and architecture",
        "",
    ]
    groups = {}
    for r in rows:
        groups.setdefault((r[0], r[1]), []).append(r)
    sw = max(len("source"), *(len(src) for src, _ in groups)) + 2
    lines.append(f"{'source':<{sw}}{'arch':<7}{'kernels':>8}{'max_regs':>10}{'spilling':>10}{'vec128':>8}")
    for (src, arch), g in sorted(groups.items()):
        lines.append(f"{src:<{sw}}{arch:<7}{len(g):>8}{max(r[2] for r in g):>10}"
                     f"{sum(1 for r in g if r[3] or r[4]):>10}{sum(1 for r in g if r[7] == 'yes'):>8}")
    lines += [
        "",
        "## kernels",
        "",
        "  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  " + head[-1],
    ]
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"ptxas_report: {len(rows)} kernels, {len(spills)} with spills -> {a.out}")


if __name__ == "__main__":
    main()
