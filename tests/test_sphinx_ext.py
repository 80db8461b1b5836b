"""The Sphinx extension on a one-page project: notebook downloads, "Open in Colab" links and where the notebooks
install d2lcore from, with and without a configured repository, in a strict (-W) build."""

import subprocess
import sys
import zipfile
from types import SimpleNamespace

import nbformat
import pytest
from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.utils import new_document
from sphinx.cmd.build import build_main
from sphinx_design.shared import create_component

from booktools.sphinx_ext import (
    FrameworkTabs,
    SolutionCode,
    SolutionTitles,
    _is_solution,
    colab_links,
    colab_url,
    site_url,
    wheel_url,
)
from booktools.split import WHEEL, setup_cell
from d2lcore.frameworks import FRAMEWORKS, REGISTRY


def build(tmp_path, *defines, wheel=True, strict=True, conf=""):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["booktools.sphinx_ext"]\nproject = "t"\n' + conf)
    (src / "index.rst").write_text("A Section\n=========\n\nSome text.\n")
    for fw in FRAMEWORKS:  # the page's per-framework notebooks, where the book's build puts them
        folder = tmp_path / "notebooks" / fw
        folder.mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[setup_cell(fw)], metadata={"d2l": {"framework": fw}})
        nbformat.write(nb, folder / "index.ipynb")
    if wheel:  # where make dist puts the wheel (d2l_dist_dir: ../dist from the source folder)
        (tmp_path / "dist").mkdir()
        (tmp_path / "dist" / WHEEL).write_bytes(b"a wheel")
    args = ["-W", "-q", "-b", "html", *[f"-D{d}" for d in defines], str(src), str(out)]
    status = build_main(args)
    if not strict:
        return status
    assert status == 0, "the strict build failed (warnings are errors)"
    return (out / "index.html").read_text(encoding="utf-8")


def setup_source(out, framework):
    """The setup cell of the site's notebook, and of the same notebook in the site's zip."""
    nb = nbformat.read(out / "notebooks" / framework / "index.ipynb", as_version=4)
    with zipfile.ZipFile(out / "notebooks" / f"{framework}.zip") as zf:
        zipped = nbformat.reads(zf.read(f"{framework}/index.ipynb").decode(), as_version=4)
    assert zipped == nb
    return nb.cells[0].source


def test_without_a_site_the_notebooks_name_pypi(tmp_path):
    build(tmp_path)
    for fw in FRAMEWORKS:
        assert f'pip install "d2lcore[{REGISTRY[fw].extra}]==' in setup_source(tmp_path / "out", fw)
    assert not (tmp_path / "out" / "notebooks" / WHEEL).exists()


def test_the_site_offers_the_wheel_and_its_notebooks_install_it(tmp_path):
    build(tmp_path, "d2l_repository=Someone/attention-book")
    out = tmp_path / "out"
    assert (out / "notebooks" / WHEEL).read_bytes() == b"a wheel"
    url = f"https://someone.github.io/attention-book/notebooks/{WHEEL}"
    for fw in FRAMEWORKS:
        code = setup_source(out, fw)
        assert f'pip install "d2lcore[{REGISTRY[fw].extra}] @ {url}"' in code
        assert (
            f'"d2lcore[{REGISTRY[fw].extra}] @ {url}"]' in code
        )  # the pip call, not only the comment


def test_after_the_release_the_notebooks_name_pypi(tmp_path):
    build(tmp_path, "d2l_repository=someone/attention-book", "d2l_install_from=pypi")
    assert "github.io" not in setup_source(tmp_path / "out", "pytorch")


def test_a_site_without_the_wheel_fails_the_build(tmp_path, capsys):
    assert build(tmp_path, "d2l_site_url=https://example.org/book", wheel=False, strict=False) != 0
    assert "make dist" in capsys.readouterr().err


def test_site_url(monkeypatch):
    monkeypatch.delenv("D2L_SITE_URL", raising=False)

    def config(repository="", url="", install_from="site"):
        return SimpleNamespace(
            d2l_repository=repository, d2l_site_url=url, d2l_install_from=install_from
        )

    assert site_url(config()) == ""
    assert site_url(config("Owner/book")) == "https://owner.github.io/book/"
    assert site_url(config("owner/Owner.github.io")) == "https://owner.github.io/"
    assert site_url(config("owner/book", "https://example.org/b")) == "https://example.org/b/"
    assert wheel_url(config("owner/book", install_from="pypi")) is None
    assert wheel_url(config()) is None
    with pytest.raises(ValueError, match="'site' or 'pypi'; got 'conda'"):
        wheel_url(config("owner/book", install_from="conda"))


def test_without_a_repository_there_are_no_colab_links(tmp_path):
    html = build(tmp_path)
    assert html.count('class="d2l-download ') == len(FRAMEWORKS)
    assert "d2l-colab" not in html.replace("d2l.js", "")


def test_colab_links_follow_the_configured_repository(tmp_path):
    html = build(tmp_path, "d2l_repository=someone/attention-book", "d2l_notebooks_branch=pages-nb")
    for fw in FRAMEWORKS:
        url = f"https://colab.research.google.com/github/someone/attention-book/blob/pages-nb/{fw}/index.ipynb"
        assert f'href="{url}" data-framework="{fw}"' in html
    assert html.count('class="d2l-colab"') == len(FRAMEWORKS)
    assert "d2l.js" in html


def test_colab_url_and_bad_repositories():
    assert (
        colab_url("a/b", "nb", "pytorch", "chapters/x/y")
        == "https://colab.research.google.com/github/a/b/blob/nb/pytorch/chapters/x/y.ipynb"
    )
    assert colab_links("", "notebooks", "index") == ""
    for bad in ("https://github.com/a/b", "a", "a/b/c", "a b/c"):
        with pytest.raises(ValueError, match="'owner/name'"):
            colab_links(bad, "notebooks", "index")


def _cell(*tags, hidden=True):
    """A code cell's container as myst-nb makes it (``hide_mode`` for a cell tagged hide-cell)."""
    cell = nodes.container(
        nb_element="cell_code",
        classes=["cell", *(f"tag_{t}" for t in tags)],
        hide_mode="all" if hidden else None,
    )
    cell += nodes.container(nb_element="cell_code_source")
    return cell


def _dropdown(title):
    """A sphinx-design dropdown before its HTML post-transform: the title's rubric, then the body."""
    dropdown = create_component("dropdown", has_title=True, opened=False)
    dropdown += nodes.rubric(title, title)
    dropdown += nodes.paragraph("", f"The text of {title}.")
    return dropdown


def _apply(transform, section):
    document = new_document("page", frontend.get_default_settings(rst.Parser))
    document += section
    transform(document).apply()
    return document


def test_solution_code_moves_into_its_solution_without_toggles():
    """Cells and framework tab-sets right after a "Solution to exercise N" dropdown go into it, in order,
    and lose their hide-cell toggle; the run ends at the first other node, and a Hint keeps what follows it."""
    hint, first, second = (
        _dropdown("Hint"),
        _dropdown("Solution to exercise 1"),
        _dropdown("Solution to exercise 2"),
    )
    after_hint = _cell("hide-cell")
    section = nodes.section("", hint, after_hint, first)
    framework_cells = [_cell(fw, "hide-cell") for fw in ("mxnet", "pytorch", "tensorflow")]
    section.extend(framework_cells)
    shared = _cell("hide-cell", "nbval-check-output")
    prose = nodes.paragraph("", "Prose after the solution.")
    visible = _cell(hidden=False)
    section.extend([shared, prose, visible, second, _cell("hide-cell")])
    document = _apply(SolutionTitles, section)  # before the title is translated, as in the build
    FrameworkTabs(document).apply()  # groups the framework cells
    # a translated title (the Russian build) changes nothing: the solution was found by its English title
    first[0].replace_self(nodes.rubric("Решение упражнения 1", "Решение упражнения 1"))
    SolutionCode(document).apply()
    kinds = [
        "solution" if _is_solution(c) else c.get("design_component") or c.tagname
        for c in section.children
    ]
    assert kinds == ["dropdown", "container", "solution", "paragraph", "container", "solution"]
    first, second = section[2], section[5]
    assert [c.get("design_component") or c.get("nb_element") for c in first[2:]] == [
        "tab-set",
        "cell_code",
    ]
    assert first[1].astext() == "The text of Solution to exercise 1."
    assert first[0].astext() == "Решение упражнения 1"
    moved = [c for c in first.findall(nodes.container) if c.get("nb_element") == "cell_code"]
    assert len(moved) == 4 and not any(c.get("hide_mode") for c in moved)
    assert [c.get("nb_element") for c in second[2:]] == ["cell_code"]
    assert second[2].get("hide_mode") is None
    assert section[1]["hide_mode"] == "all", "a cell after a Hint keeps its toggle"
    assert section[4]["hide_mode"] is None, "a visible cell after prose stays where it is"


def test_solution_code_leaves_a_solution_without_code_alone():
    solution = _dropdown("Solution to exercise 3")
    section = nodes.section("", solution, nodes.paragraph("", "Next."), _cell("hide-cell"))
    document = _apply(SolutionTitles, section)
    SolutionCode(document).apply()
    section = document.children[0]
    assert len(solution.children) == 2 and section[2]["hide_mode"] == "all"


LANGUAGES_CONF = """
d2l_languages = {"ru": ["ru", "Русский", "ru"], "zh_CN": ["zh-cn", "简体中文", "zh-Hans"]}
language = "zh_CN"
d2l_language_folder = "zh-cn"
"""


def test_a_page_says_its_language_and_links_itself_in_every_language(tmp_path):
    """A page of a language's build has that language's BCP 47 code as its lang (not Sphinx's zh_CN) and one
    hreflang link per language, English first, to the same page in each language's folder; the language menu's
    label comes with them (booktools.sphinx_ext.language_links)."""
    html = build(tmp_path, conf=LANGUAGES_CONF)
    assert '<html lang="zh-Hans"' in html
    assert (
        '<link rel="alternate" hreflang="en" href="../index.html" title="English">\n'
        '<link rel="alternate" hreflang="ru" href="../ru/index.html" title="Русский">\n'
        '<link rel="alternate" hreflang="zh-Hans" href="../zh-cn/index.html" title="简体中文">\n'
        '<meta name="d2l-language-label" content="'
    ) in html


def test_without_languages_a_page_has_no_language_links(tmp_path):
    html = build(tmp_path)
    assert 'rel="alternate"' not in html and "d2l-language-label" not in html
    assert '<html lang="en"' in html


def test_hidden_cells_prompts_are_in_the_pages_language(tmp_path):
    """myst-nb's prompts of a hidden cell ("Show code cell source") come in the page's language, from booktools'
    catalogue (booktools.sphinx_ext.HiddenCellPrompts); an English build keeps myst-nb's words."""
    from booktools.i18n import compile_catalogues

    compile_catalogues("ru")  # the .mo files that the book's build compiles before Sphinx starts
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "booktools.sphinx_ext"]\nproject = "t"\nnb_execution_mode = "off"\n'
    )
    cell = nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["hide-input"]})
    cell.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    page = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A Section"), cell])
    page.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(page, src / "index.ipynb")
    for fw in FRAMEWORKS:
        folder = tmp_path / "notebooks" / fw
        folder.mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[setup_cell(fw)], metadata={"d2l": {"framework": fw}})
        nbformat.write(nb, folder / "index.ipynb")
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / WHEEL).write_bytes(b"a wheel")
    for language, show, hide in [
        ("en", "Show code cell source", "Hide code cell source"),
        ("ru", "Показать код ячейки", "Скрыть код ячейки"),
    ]:
        out = tmp_path / f"out-{language}"
        # In a process of its own: myst-nb's parser and Sphinx's translators stay registered in the process that
        # builds, which would change the other tests' builds
        command = [sys.executable, "-m", "sphinx", "-q", "-b", "html", f"-Dlanguage={language}"]
        done = subprocess.run([*command, str(src), str(out)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        html = (out / "index.html").read_text(encoding="utf-8")
        assert f">{show}</p>" in html and f">{hide}</p>" in html
