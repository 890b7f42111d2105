#!/usr/bin/env python3
"""Kernel lint: constructs in kernel code whose result differs between the cuda device (nvcc, PTX) and the sim
device (the same source compiled for x86-64 by the host compiler, docs/sim.md).

Rules:
  float-to-int  A floating-to-integer conversion: an explicit cast, an implicit conversion, or a compound
                assignment (`i += f`) to an integer. PTX cvt.rzi saturates and maps NaN to 0; on x86-64 an
                out-of-range or NaN value gives the "integer indefinite" (INT_MIN for int32: (int)3e9f).
                Use convert::float_to_int<I>(v) (src/device/convert.cuh) or the CUDA intrinsics
                (__float2int_rz & co.), which behave alike on both devices.
  shift         A shift (<<, >>, <<=, >>=) whose amount is not a constant expression. PTX shl/shr clamp the
                amount to the width (0, or the sign fill for a signed >>); x86-64 masks it (x << 33 == x << 1).
                Use shift::left / shift::right (src/device/shift.cuh), or show the amount is below the width.

A finding is accepted when its line, or a comment-only line right above it, carries the annotation
    // lint: float->int in range: <why the value is finite and in range>
    // lint: shift < width: <why the amount is below the width of the shifted type>
with a non-empty reason. The helpers themselves (APPROVED) are exempt.

What is checked: the kernel code is src/ops/**/*.cuh, src/ops/**/device*.cu and src/device/**/*.cuh. Every
kernel unit (src/ops/**/device*.cu) is parsed as the sim device compiles it (C++20, sim/compat.cuh in host
mode), with clang's AST matchers (clang-query), so the conversions and shifts of every template instantiation
the units make are seen with their concrete types and constant template arguments. A kernel header that no unit
reaches by #include is parsed on its own (its templates' instantiations are then not seen). Code that only
nvcc compiles (`#if !BARACUDA_SIM`) is not checked: it does not run on sim.

Usage: kernel_lint.py [--clang-query PATH] [--cuda-include DIR]... [--jobs N] [--expect FILE]
With --expect FILE, FILE is the only unit and the only kernel code, and the lint checks its own findings
against the lines of FILE marked `// expect-lint: <rule>`: exit 0 when they are the same (tests/lint).
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RULES = {
    "float-to-int": "floating-to-integer conversion: use convert::float_to_int<I>(v) or a __float2int_* intrinsic"
                    " (PTX cvt saturates and maps NaN to 0; x86-64 does not)",
    "shift": "shift by a non-constant amount: use shift::left/right, or annotate why it is below the width"
             " (PTX clamps the amount, x86-64 masks it)",
}
ANNOTATIONS = {
    "float-to-int": re.compile(r"//.*\blint: float->int in range: *\S"),
    "shift": re.compile(r"//.*\blint: shift < width: *\S"),
}
# The helpers whose bodies may convert and shift: they handle the out-of-range cases explicitly.
APPROVED = {
    "float-to-int": ["baracuda::convert::float_to_int"],
    "shift": ["baracuda::shift::left", "baracuda::shift::right"],
}


def constant_matcher(depth):
    """A matcher for a constant expression: literals, template arguments, constexpr variables, enumerators,
    sizeof/alignof, and casts and arithmetic of those, nested `depth` levels deep."""
    c = ("anyOf(integerLiteral(), characterLiteral(), substNonTypeTemplateParmExpr(),"
         " declRefExpr(to(nonTypeTemplateParmDecl())), declRefExpr(to(varDecl(isConstexpr()))),"
         " declRefExpr(to(enumConstantDecl())), unaryExprOrTypeTraitExpr())")
    for _ in range(depth):
        inner = f"ignoringParenImpCasts({c})"
        c = (f"anyOf({c}, binaryOperator(hasLHS({inner}), hasRHS({inner})), unaryOperator(hasUnaryOperand({inner})),"
             f" explicitCastExpr(hasSourceExpression({inner})))")
    return c


def query():
    def outside(rule):
        names = ", ".join(f'"{n}"' for n in APPROVED[rule])
        return f"unless(hasAncestor(functionDecl(hasAnyName({names}))))"

    return "\n".join([
        "set output diag",
        "set bind-root false",
        f'match castExpr(hasCastKind("CK_FloatingToIntegral"), {outside("float-to-int")}).bind("float-to-int")',
        'match binaryOperator(hasAnyOperatorName("+=", "-=", "*=", "/="), hasLHS(hasType(isInteger())),'
        f' hasRHS(hasType(realFloatingPointType())), {outside("float-to-int")}).bind("float-to-int")',
        'match binaryOperator(hasAnyOperatorName("<<", ">>", "<<=", ">>="),'
        f' unless(hasRHS(ignoringParenImpCasts({constant_matcher(2)}))), {outside("shift")}).bind("shift")',
        "",
    ])


BINDS = re.compile(r'^(.+?):(\d+):(\d+): note: "([\w-]+)" binds here$')
ERROR = re.compile(r": (fatal )?error: ")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def show(path):
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def is_kernel_code(path):
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
    if rel.startswith("src/ops/"):
        return path.suffix == ".cuh" or (path.suffix == ".cu" and path.name.startswith("device"))
    return rel.startswith("src/device/") and path.suffix == ".cuh"


def includes(path, seen):
    """The files `path` reaches through #include "..." (a superset of what a compilation includes)."""
    if path in seen:
        return
    seen.add(path)
    for name in INCLUDE.findall(path.read_text(errors="replace")):
        for base in (path.parent, ROOT / "src", ROOT / "include"):
            target = (base / name).resolve()
            if target.is_file():
                includes(target, seen)
                break


def kernel_units():
    """The kernel units, then the kernel headers that none of them reaches (those that include the most first)."""
    def reach(path):
        seen = set()
        includes(path, seen)
        return seen

    units = sorted(p.resolve() for p in (ROOT / "src" / "ops").glob("**/device*.cu"))
    reached = set().union(*(reach(u) for u in units))
    headers = sorted(p.resolve() for d in ("src/ops", "src/device") for p in (ROOT / d).glob("**/*.cuh"))
    for h in sorted(headers, key=lambda h: -len(reach(h))):
        if h not in reached:
            units.append(h)
            reached |= reach(h)
    return units


def lint_unit(clang_query, query_file, unit, flags):
    """(findings {(path, line, col, rule)}, errors [str]) of one unit."""
    p = subprocess.run([clang_query, "-f", str(query_file), str(unit), "--"] + flags, capture_output=True,
                       text=True, errors="replace")
    found = set()
    for line in p.stdout.splitlines():
        m = BINDS.match(line)
        if m:
            found.add((Path(m.group(1)).resolve(), int(m.group(2)), int(m.group(3)), m.group(4)))
    errors = [line for line in (p.stdout + p.stderr).splitlines() if ERROR.search(line)]
    if p.returncode != 0 and not errors:
        errors = [f"clang-query exited with {p.returncode}"]
    return found, errors


def annotated(lines, line, rule):
    if ANNOTATIONS[rule].search(lines[line - 1]):
        return True
    above = lines[line - 2] if line >= 2 else ""
    return above.lstrip().startswith("//") and bool(ANNOTATIONS[rule].search(above))


def cuda_includes(given):
    """The CUDA include directories: those given (the first must hold cuda_runtime.h), else the toolkit's."""
    candidates = [given] if given else []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append([os.path.join(os.environ[var], "include")])
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append([os.path.join(os.path.dirname(os.path.realpath(nvcc)), "..", "include")])
    candidates.append(["/usr/local/cuda/include"])
    for dirs in candidates:
        if os.path.isfile(os.path.join(dirs[0], "cuda_runtime.h")):
            return [os.path.realpath(d) for d in dirs]
    sys.exit("kernel_lint: no CUDA include directory with cuda_runtime.h (use --cuda-include)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clang-query", default=shutil.which("clang-query") or shutil.which("clang-query-14"))
    ap.add_argument("--cuda-include", action="append", help="a CUDA include directory (repeatable)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--expect", type=Path, help="check the findings in this file against its expect-lint marks")
    args = ap.parse_args()
    if not args.clang_query:
        sys.exit("kernel_lint: clang-query not found (Debian: clang-tools-14)")
    flags = ["-x", "c++", "-std=c++20", f"-I{ROOT / 'include'}", f"-I{ROOT / 'src'}"]
    for d in cuda_includes(args.cuda_include):
        flags += ["-isystem", d]
    flags += ["-DBARACUDA_HAVE_CUDA_KERNELS=0", "-Wno-everything"]

    if args.expect:
        units = [args.expect.resolve()]
        in_scope = lambda p: p == units[0]  # noqa: E731
    else:
        units = kernel_units()
        in_scope = is_kernel_code

    with tempfile.TemporaryDirectory() as tmp:
        query_file = Path(tmp) / "kernel_lint.query"
        query_file.write_text(query())
        findings, failed = set(), False
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = {pool.submit(lint_unit, args.clang_query, query_file, u, flags): u for u in units}
            for f in concurrent.futures.as_completed(futures):
                found, errors = f.result()
                if errors:
                    failed = True
                    print(f"kernel_lint: {show(futures[f])} does not compile:", *errors[:10], sep="\n  ")
                findings |= {x for x in found if in_scope(x[0])}
    if failed:
        return 2

    # One finding per (file, line, rule); the column of the first.
    by_line = {}
    for path, line, col, rule in sorted(findings):
        by_line.setdefault((path, line, rule), col)
    sources = {}
    reported = []
    for (path, line, rule), col in sorted(by_line.items()):
        lines = sources.setdefault(path, path.read_text(errors="replace").splitlines())
        if not annotated(lines, line, rule):
            reported.append((path, line, col, rule))

    if args.expect:
        lines = args.expect.read_text().splitlines()
        marks = re.compile(r"//.*\bexpect-lint: ([\w-]+)")
        expected = {(i + 1, m.group(1)) for i, text in enumerate(lines) if (m := marks.search(text))}
        got = {(line, rule) for _, line, _, rule in reported}
        for line, rule in sorted(expected - got):
            print(f"{args.expect}:{line}: missed: expected a {rule} finding")
        for line, rule in sorted(got - expected):
            print(f"{args.expect}:{line}: unexpected {rule} finding: {lines[line - 1].strip()}")
        print(f"kernel_lint --expect: {len(expected & got)} of {len(expected)} planted findings, "
              f"{len(got - expected)} unexpected")
        return 0 if got == expected else 1

    for path, line, col, rule in reported:
        print(f"{show(path)}:{line}:{col}: error: [{rule}] {RULES[rule]}")
        print(f"    {sources[path][line - 1].strip()}")
    print(f"kernel_lint: {len(units)} units, {len(reported)} findings"
          + (f" ({len(by_line) - len(reported)} annotated)" if len(by_line) > len(reported) else ""))
    return 1 if reported else 0


if __name__ == "__main__":
    sys.exit(main())
