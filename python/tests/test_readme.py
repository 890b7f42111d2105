"""The README's Python example runs as it is written."""

import pathlib
import re

import pytest

pytest.importorskip("torch")

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(capsys):
    text = README.read_text()
    match = re.search(r"<!-- example: python -->\n```python\n(.*?)```", text, re.S)
    assert match, "the README has no Python example"
    exec(compile(match.group(1), "README.md", "exec"), {})
    assert "gelu" in capsys.readouterr().out
