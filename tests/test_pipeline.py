"""The book pipeline: split a MyST source per framework, merge executed notebooks, cache keys."""

import importlib.metadata
import os
import subprocess
import sys

import nbformat
import pytest

import d2lcore
from booktools import execute
from booktools.merge import merge
from booktools.paths import ROOT, tree_hash
from booktools.split import SETUP_TAG, details, quotes, split
from d2lcore import FRAMEWORKS
from d2lcore.frameworks import REGISTRY
from tests.sources import FRONT_MATTER

SOURCE = (
    FRONT_MATTER
    + """
# A Section

Shared prose with a figure: ![a square](img/square.svg)

```{code-cell} ipython3
:tags: [mxnet]
import mxnet
```

```{code-cell} ipython3
:tags: [pytorch]
import torch
```

```{code-cell} ipython3
:tags: [tensorflow]
import tensorflow
```

+++ {"tags": ["pytorch"]}

Only PyTorch readers see this.

+++

```{code-cell} ipython3
print("same everywhere")
```

```{code-cell} ipython3
print(framework_name)
```
"""
)


@pytest.fixture
def source(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "square.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    path = tmp_path / "section.md"
    path.write_text(SOURCE)
    return path


def test_split_keeps_each_frameworks_cells(source):
    notebooks = {fw: split(source, fw) for fw in FRAMEWORKS}
    code = {
        fw: [c.source for c in nb.cells[1:] if c.cell_type == "code"]
        for fw, nb in notebooks.items()
    }
    assert code["mxnet"] == ["import mxnet", 'print("same everywhere")', "print(framework_name)"]
    assert code["pytorch"][0] == "import torch" and code["tensorflow"][0] == "import tensorflow"
    prose = {
        fw: " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for fw, nb in notebooks.items()
    }
    assert "Only PyTorch readers" in prose["pytorch"]
    assert "Only PyTorch readers" not in prose["mxnet"] + prose["tensorflow"]
    for fw, nb in notebooks.items():
        assert nb.metadata.kernelspec.name == "python3"  # a kernel every Jupyter has
        assert nb.metadata.d2l.framework == fw
        assert "jupytext" not in nb.metadata
        nbformat.validate(nb)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_split_starts_with_the_setup_cell(source, framework):
    """The first cell names what to install and installs it only where d2lcore is missing; the merged page
    never shows it."""
    setup = split(source, framework).cells[0]
    extra = REGISTRY[framework].extra
    assert setup.cell_type == "code" and setup.id == "setup" and setup.metadata.tags == [SETUP_TAG]
    first, second = setup.source.splitlines()[:2]
    assert first == (
        "# Copyright © 2026 The d2lcore authors. Text and code under the MIT License (the LICENSE file of the "
        "book's repository)."
    )
    assert (
        (ROOT / "LICENSE")
        .read_text()
        .startswith("MIT License\n\nCopyright (c) 2026 The d2lcore authors\n")
    )
    assert second.startswith(f"# This notebook needs d2lcore for {REGISTRY[framework].label}: ")
    assert f'pip install "d2lcore[{extra}]=={d2lcore.__version__}"' in setup.source
    assert 'if importlib.util.find_spec("d2lcore") is None:' in setup.source
    compile(setup.source, "setup", "exec")


def test_setup_cell_changes_nothing_where_d2lcore_is_installed(source, tmp_path):
    """Run for real in this environment (which has d2lcore), with pip unable to install anything: it must not
    call pip at all."""
    code = split(source, "pytorch").cells[0].source
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "nothing")}
    before = importlib.metadata.distribution("d2lcore").read_text("RECORD")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr
    assert importlib.metadata.distribution("d2lcore").read_text("RECORD") == before


def test_setup_cell_is_not_on_the_page(tmp_path, source):
    notebooks = {}
    for fw in FRAMEWORKS:
        nb = split(source, fw)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
        notebooks[fw] = nb
    merged = merge(source, notebooks)
    assert not any(SETUP_TAG in c.metadata.get("tags", []) for c in merged.cells)
    assert not any("find_spec" in c.source for c in merged.cells)


def test_split_ids_are_fixed_and_shared(source):
    ids = {fw: [c.id for c in split(source, fw).cells] for fw in FRAMEWORKS}
    shared = set(ids["mxnet"]) & set(ids["pytorch"]) & set(ids["tensorflow"])
    # the setup cell, the title and the two shared code cells
    assert {"setup", "c000", "c005", "c006"} == shared
    assert ids == {
        fw: [c.id for c in split(source, fw).cells] for fw in FRAMEWORKS
    }  # same on every run


def test_split_embeds_images(source):
    first = split(source, "pytorch").cells[1]
    assert "attachment:square.svg" in first.source
    assert "image/svg+xml" in first.attachments["square.svg"]


def test_split_reports_a_missing_image(source):
    source.write_text(SOURCE.replace("img/square.svg", "img/missing.svg"))
    with pytest.raises(FileNotFoundError, match="image 'img/missing.svg' in cell c000 not found"):
        split(source, "mxnet")


EXERCISES = """## Exercises

1. A question.

   :::{dropdown} Hint
   Look at *the keys*.
   :::

:::{dropdown} Solution to exercise 1
The answer.
:::
"""


def test_split_writes_dropdowns_as_details(source):
    source.write_text(SOURCE + "\n" + EXERCISES)
    last = split(source, "mxnet").cells[-1]
    assert ":::" not in last.source
    assert (
        "   <details><summary>Hint</summary>\n\n   Look at *the keys*.\n\n   </details>"
        in last.source
    )
    assert (
        "<details><summary>Solution to exercise 1</summary>\n\nThe answer.\n\n</details>"
        in last.source
    )


def test_the_page_keeps_its_dropdowns(source):
    source.write_text(SOURCE + "\n" + EXERCISES)
    assert merge(source, _executed(source)).cells[-1].source == EXERCISES.strip()


@pytest.mark.parametrize(
    "text, message",
    [
        (":::{dropdown} Hint\nnever closed\n", "not closed"),
        ("1. A question.\n\n   :::{dropdown} Hint\n   text\n:::\n", "not closed"),
        (":::{dropdown} Hint\n:open:\ntext\n:::\n", "options are not supported"),
    ],
)
def test_a_wrong_dropdown_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        details(text)


NOTE = """Text.

:::{admonition} For readers of D2L
:class: note d2l-note

- One difference.
- Another one.
:::

## Summary
"""


def test_split_writes_the_note_for_readers_of_d2l_as_a_quote():
    assert quotes(NOTE) == (
        "Text.\n\n> **For readers of D2L**\n>\n> - One difference.\n> - Another one.\n\n## Summary\n"
    )


def _executed(source):
    """Fake executed notebooks: the last cell prints the framework's name."""
    notebooks = {}
    for fw in FRAMEWORKS:
        nb = split(source, fw)
        for cell in nb.cells:
            if cell.cell_type == "code":
                text = fw if "framework_name" in cell.source else "same everywhere"
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
        notebooks[fw] = nb
    return notebooks


def test_merge_shows_equal_outputs_once_and_different_ones_per_framework(source):
    merged = merge(source, _executed(source))
    code = [c for c in merged.cells if c.cell_type == "code"]
    tags = [c.metadata.get("tags", []) for c in code]
    assert tags[:3] == [["mxnet"], ["pytorch"], ["tensorflow"]]
    assert [c.source for c in code[3:4]] == ['print("same everywhere")'] and tags[3] == []
    # a shared cell whose output differs: its code once, without output, then each framework's output alone
    assert tags[4] == [] and code[4].outputs == [] and "framework_name" in code[4].source
    assert [t for t in tags[5:]] == [[fw, "remove-input"] for fw in FRAMEWORKS]
    assert [c.outputs[0].text for c in code[5:]] == ["mxnet\n", "pytorch\n", "tensorflow\n"]
    assert all(c.source == code[4].source for c in code[5:])  # Jupyter Book hides it
    nbformat.validate(merged)


def test_merge_keeps_only_the_text_of_records(source):
    """A record's fields stay in the executed notebooks (the record-table reads them there); the merged notebook
    shows its line only, so the renderer meets no unknown MIME type."""
    from d2lcore.records import MIME, Record

    notebooks = _executed(source)
    for nb in notebooks.values():
        cell = next(c for c in nb.cells if c.cell_type == "code" and "same everywhere" in c.source)
        bundle = Record("training", "loss 0.1", epochs=3)._repr_mimebundle_()
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    merged = merge(source, notebooks)
    shown = next(c for c in merged.cells if c.cell_type == "code" and "same everywhere" in c.source)
    assert [dict(o.data) for o in shown.outputs] == [{"text/plain": "loss 0.1"}]
    executed = [c for nb in notebooks.values() for c in nb.cells if "same everywhere" in c.source]
    assert len(executed) == 3 and all(MIME in c.outputs[0].data for c in executed)  # not changed


def test_merge_turns_tagged_prose_into_tabs(source):
    merged = merge(source, _executed(source))
    tabs = next(
        c.source for c in merged.cells if c.cell_type == "markdown" and "tab-set" in c.source
    )
    assert ":sync-group: framework" in tabs
    order = [tabs.index(f":sync: {fw}") for fw in FRAMEWORKS]
    assert order == sorted(order)
    assert "Only PyTorch readers see this." in tabs and "*Nothing specific to MXNet here.*" in tabs
    assert "attachment:" not in merged.cells[0].source  # the page keeps its image links


def test_cache_key_follows_cells_and_environment(source):
    nb = split(source, "pytorch")
    key = execute.cache_key(nb, "pytorch", "env-1")
    assert key == execute.cache_key(split(source, "pytorch"), "pytorch", "env-1")
    assert key != execute.cache_key(nb, "pytorch", "env-2")
    assert key != execute.cache_key(nb, "tensorflow", "env-1")
    nb.cells[1].source += "\n# changed"
    assert key != execute.cache_key(nb, "pytorch", "env-1")


def test_stale_notebooks_are_those_that_notebooks_would_execute_again(
    source, tmp_path, monkeypatch
):
    """`booktools html` refuses to build from them (the pages would show another version's code and outputs)."""
    monkeypatch.setattr(execute, "notebook_path", lambda s, fw: tmp_path / fw / "page.ipynb")
    assert execute.stale([source], ["pytorch"]) == [(source, "pytorch")]  # never executed
    nb = split(source, "pytorch")
    key = execute.cache_key(nb, "pytorch", execute.environment_hash())
    nb.metadata["d2l"] = {"cache_key": key}
    (tmp_path / "pytorch").mkdir()
    nbformat.write(nb, tmp_path / "pytorch" / "page.ipynb")
    assert execute.stale([source], ["pytorch"]) == []
    nb.metadata["d2l"]["cache_key"] = "a key of older cells or an older d2lcore"
    nbformat.write(nb, tmp_path / "pytorch" / "page.ipynb")
    assert execute.stale([source], ["pytorch"]) == [(source, "pytorch")]


def test_tree_hash_changes_with_any_file(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "notes.bin").write_text("ignored")
    before = tree_hash(tmp_path / "pkg")
    (tmp_path / "pkg" / "notes.bin").write_text("still ignored")
    assert tree_hash(tmp_path / "pkg") == before
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert tree_hash(tmp_path / "pkg") != before
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    assert tree_hash(tmp_path / "pkg") == before
    (tmp_path / "pkg" / "b.py").write_text("")
    assert tree_hash(tmp_path / "pkg") != before


def test_links_to_sections_become_notebook_links(source, tmp_path):
    from booktools.links import rewrite_links

    (tmp_path / "plain.md").write_text("# Not a notebook\n")
    text = "See [the section](section.md#a-section), [a page](plain.md) and [the web](https://x.org/a.md)."
    assert rewrite_links(text, tmp_path) == (
        "See [the section](section.ipynb#a-section), [a page](plain.md) and [the web](https://x.org/a.md)."
    )


def test_sync_restores_an_edited_saved_cell(tmp_path):
    """`python -m booktools sync-saved` rewrites a page's saved cell from the package."""
    import shutil

    from booktools.paths import CHAPTERS
    from booktools.saved import mismatches, saved_cells, sync

    page = tmp_path / "nadaraya-watson.md"
    shutil.copy(CHAPTERS / "attention" / "nadaraya-watson.md", page)
    page.write_text(page.read_text().replace("epoch + 1, losses[-1]", "epoch, losses[-1]"))
    assert any(mismatches(code, f) for _, f, code in saved_cells(page))
    assert sync(page) == 3
    assert all(mismatches(code, f) == [] for _, f, code in saved_cells(page))


# A notebook page in MyST, as the chapters write them
FRONT = """---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

# make nbval, then the build: each notebook executed once, for real, on a tiny page (booktools/validate.py)
TINY = (
    FRONT
    + """
# Tiny

```{{code-cell}} ipython3
with open({count!r}, "a") as f:
    f.write("executed\\n")
```

```{{code-cell}} ipython3
:tags: [nbval-check-output]
print("shape", (2, 3))
```

```{{code-cell}} ipython3
from IPython.display import display
handle = display("first", display_id=True)
handle.update("last")
values = [1, 2]
values;
```

The run recorded {{record}}`tiny.value:.2f`.

```{{code-cell}} ipython3
from d2lcore.records import show_record
show_record("tiny", "value 3.25", value=3.25);
```
"""
)


def _expected(text):
    return {
        "cells": [
            {
                "code": ['print("shape", (2, 3))'],
                "outputs": [{"output_type": "stream", "name": "stdout", "text": [text]}],
            }
        ]
    }


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A one-page book in tmp_path; returns (source, count): count() is how often it was executed."""
    import json

    from booktools import validate

    monkeypatch.setattr(execute, "TIMINGS", tmp_path / "timings.json")
    monkeypatch.setattr(validate, "TIMINGS", tmp_path / "timings.json")
    counter = tmp_path / "count"
    source = tmp_path / "chapter" / "tiny.md"
    source.parent.mkdir()
    source.write_text(TINY.format(count=str(counter)))
    (source.parent / "expected").mkdir()
    (source.parent / "expected" / "tiny.pytorch.json").write_text(
        json.dumps(_expected("shape (2, 3)\n"))
    )

    def count():
        return len(counter.read_text().splitlines()) if counter.exists() else 0

    return source, count


def _nbval(source, tmp_path):
    from booktools.validate import run_nbval

    return run_nbval([source], ["pytorch"], folder=tmp_path / "nbval")


def test_nbval_then_the_build_execute_each_notebook_once(tiny, tmp_path):
    source, count = tiny
    assert _nbval(source, tmp_path) == 0
    assert count() == 1
    execute.execute_all(
        [source], ["pytorch"]
    )  # what make html runs before merging: finds it current
    assert count() == 1
    # the notebook nbval kept is the one the build's own executor makes (display updates, ";", counts)
    kept = nbformat.read(execute.notebook_path(source, "pytorch"), 4)
    execute.execute_all([source], ["pytorch"], force=True)
    assert count() == 2
    made = nbformat.read(execute.notebook_path(source, "pytorch"), 4)
    assert [(c.get("outputs"), c.get("execution_count")) for c in kept.cells] == [
        (c.get("outputs"), c.get("execution_count")) for c in made.cells
    ]
    assert kept.cells[3].outputs[0].text == "shape (2, 3)\n"
    assert [o.data["text/plain"] for o in kept.cells[-3].outputs] == ["'last'"]
    # the prose's record role is filled in nbval's notebook as in the build's (booktools.quotes)
    assert kept.cells[-2].source == made.cells[-2].source == "The run recorded 3.25."
    assert kept.metadata.kernelspec.name == "python3"  # as readers get it
    assert kept.metadata.d2l.cache_key == made.metadata.d2l.cache_key


def test_nbval_names_the_command_for_a_changed_output(tiny, tmp_path, capfd):
    import json

    source, count = tiny
    expected = source.parent / "expected" / "tiny.pytorch.json"
    expected.write_text(json.dumps(_expected("shape (3, 2)\n")))
    assert _nbval(source, tmp_path) != 0
    out = capfd.readouterr().out
    assert "Cell outputs differ" in out and "shape (3, 2)" in out
    assert "differ from those recorded in" in out and str(expected.name) in out
    assert "make expected-outputs SECTION=tiny FRAMEWORK=pytorch" in out
    # it did execute, once, and the build keeps what it printed
    assert count() == 1
    execute.execute_all([source], ["pytorch"])
    assert count() == 1
    from booktools.expected import record

    assert record(source, "pytorch", nbformat.read(execute.notebook_path(source, "pytorch"), 4))
    assert json.loads(expected.read_text())["cells"] == _expected("shape (2, 3)\n")["cells"]


def test_nbval_fails_where_nothing_is_recorded(tiny, tmp_path, capfd):
    source, count = tiny
    (source.parent / "expected" / "tiny.pytorch.json").unlink()
    assert _nbval(source, tmp_path) != 0
    out = capfd.readouterr().out
    assert "checked cell c002 ('print(\"shape\", (2, 3))') has no recorded outputs" in out
    assert "make expected-outputs SECTION=tiny FRAMEWORK=pytorch" in out


def test_the_book_reuses_its_executed_notebooks(tiny):
    source, count = tiny
    execute.execute_all([source], ["pytorch"])
    execute.execute_all([source], ["pytorch"])
    assert count() == 1
    source.write_text(source.read_text().replace("(2, 3)", "(2, 4)"))
    execute.execute_all([source], ["pytorch"])
    assert count() == 2


# Two notebooks at once (booktools.execute.default_jobs): each waits, in its kernel, until both have started, so
# a run that executed them one after the other would print "together 1" after waiting two minutes.
TOGETHER = (
    FRONT
    + """
# Together

```{{code-cell}} ipython3
:tags: [nbval-check-output]
import pathlib, time
here = pathlib.Path({folder!r})
(here / "{name}.started").touch()
deadline = time.monotonic() + 120
while len(list(here.glob("*.started"))) < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
print("together", len(list(here.glob("*.started"))))
```
"""
)


@pytest.fixture
def two_pages(tmp_path, monkeypatch):
    """Two one-cell pages in tmp_path, each of which prints how many of the two had started when it ran."""
    import json

    from booktools import validate

    monkeypatch.setattr(execute, "TIMINGS", tmp_path / "timings.json")
    monkeypatch.setattr(validate, "TIMINGS", tmp_path / "timings.json")
    chapter = tmp_path / "chapter"
    (chapter / "expected").mkdir(parents=True)
    pages = []
    for name in ("first", "second"):
        page = chapter / f"{name}.md"
        page.write_text(TOGETHER.format(folder=str(tmp_path), name=name))
        pages.append(page)
        code = execute.split(page, "pytorch").cells[-1].source
        outputs = [{"output_type": "stream", "name": "stdout", "text": ["together 2\n"]}]
        record = {"cells": [{"code": code.splitlines(keepends=True), "outputs": outputs}]}
        (chapter / "expected" / f"{name}.pytorch.json").write_text(json.dumps(record))
    return pages


def _printed(source):
    nb = nbformat.read(execute.notebook_path(source, "pytorch"), 4)
    return nb.cells[-1].outputs[0].text


def test_the_build_executes_notebooks_side_by_side(two_pages):
    execute.execute_all(two_pages, ["pytorch"], force=True, jobs=2)
    assert [_printed(page) for page in two_pages] == ["together 2\n"] * 2


def test_nbval_executes_notebooks_side_by_side(two_pages, tmp_path):
    from booktools.validate import run_nbval

    assert run_nbval(two_pages, ["pytorch"], folder=tmp_path / "nbval", jobs=2) == 0
    assert [_printed(page) for page in two_pages] == ["together 2\n"] * 2


def test_one_notebook_per_core_unless_told(monkeypatch):
    monkeypatch.delenv("D2L_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(execute.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.delenv(execute.JOBS, raising=False)
    assert execute.default_jobs() == 2
    monkeypatch.setenv(
        "D2L_NUM_THREADS", "2"
    )  # kernels computing on 2 threads: one notebook at a time
    assert execute.default_jobs() == 1
    monkeypatch.setattr(execute.os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert execute.default_jobs() == execute.MAX_JOBS
    monkeypatch.setenv(execute.JOBS, "3")
    assert execute.default_jobs() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(execute.JOBS, bad)
        with pytest.raises(ValueError, match=f"D2L_BOOK_JOBS must be a whole number.*got '{bad}'"):
            execute.default_jobs()


def test_the_longest_notebooks_start_first(tmp_path, monkeypatch):
    import json

    durations = tmp_path / "durations.json"
    a, b, c = (execute.ROOT / "chapters" / f"{n}.md" for n in "abc")
    durations.write_text(
        json.dumps({"chapters/a.md": {"pytorch": 3}, "chapters/b.md": {"pytorch": 80}})
    )
    monkeypatch.setattr(execute, "DURATIONS", durations)
    work = [(a, "pytorch"), (b, "pytorch"), (c, "pytorch"), (a, "mxnet")]
    assert execute.longest_first(work) == [
        (c, "pytorch"),
        (a, "mxnet"),
        (b, "pytorch"),
        (a, "pytorch"),
    ]


def test_the_site_executes_every_framework_whatever_the_selection():
    """`make html` merges all three frameworks' notebooks: a selection passed on to the execution left the other
    two unexecuted, and the merge of a fresh clone failed."""
    root = execute.ROOT
    for target in ("html",):
        dry_run = subprocess.run(
            ["make", "-n", "-W", "requirements.txt", target, "FRAMEWORK=mxnet", "SECTION=nadaraya"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        executions = [line for line in dry_run.splitlines() if "-m booktools notebooks" in line]
        assert executions, f"make {target} executes no notebooks:\n{dry_run}"
        for line in executions:
            assert "--framework" not in line and "--section" not in line, line
