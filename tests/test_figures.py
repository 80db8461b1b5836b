"""Numbered, captioned figures: images with a caption become figure directives, and cells that draw a figure
carry its caption, name and alt text through the merge (booktools.figures); show_heatmaps' size and ticks."""

import nbformat
import numpy as np
import pytest

from booktools.figures import FigureError, figure_directives
from booktools.merge import merge
from booktools.split import split
from d2lcore import FRAMEWORKS, plotting
from tests.sources import FRONT_MATTER

SOURCE = (
    FRONT_MATTER
    + """
# A Section

![A grey square on white.](img/square.svg "The square the text talks about.")

```{code-cell} ipython3
---
mystnb:
  figure: {name: fig-curve, caption: The curve rises.}
  image: {alt: A line from bottom left to top right.}
---
draw(framework_name)
```

```{code-cell} ipython3
---
mystnb:
  figure: {name: fig-same, caption: The same in every framework.}
  image: {alt: A flat line at height one.}
---
draw("same")
```
"""
)

SVG = '<svg xmlns="http://www.w3.org/2000/svg"/>'


@pytest.fixture
def source(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "square.svg").write_text(SVG)
    path = tmp_path / "section.md"
    path.write_text(SOURCE)
    return path


def _executed(source, record=False):
    """Fake executed notebooks: each code cell displays an SVG drawing that names the framework, or "same"."""
    notebooks = {}
    for fw in FRAMEWORKS:
        nb = split(source, fw)
        for cell in nb.cells[1:]:
            if cell.cell_type == "code":
                text = fw if "framework_name" in cell.source else "same"
                drawing = {"image/svg+xml": f"<svg><!-- {text} --></svg>", "text/plain": "<Figure>"}
                cell.outputs = [nbformat.v4.new_output("display_data", data=drawing)]
                if record:
                    line = {"text/plain": "loss 0.1"}
                    cell.outputs.append(nbformat.v4.new_output("display_data", data=line))
        notebooks[fw] = nb
    return notebooks


def test_a_captioned_image_becomes_a_named_figure(source):
    merged = merge(source, _executed(source))
    text = merged.cells[0].source
    assert (
        "```{figure} img/square.svg\n:alt: A grey square on white.\n:name: fig-square\n\n" in text
    )
    assert "The square the text talks about.\n```" in text


def test_an_image_without_caption_or_description_is_refused():
    with pytest.raises(FigureError, match=r"img/a\.svg needs alt text and a caption"):
        figure_directives("![A dot.](img/a.svg)", "page.md, cell c001")
    with pytest.raises(FigureError, match="needs alt text"):
        figure_directives('![ ](img/a.svg "Caption.")', "page.md")
    inline = (
        "An icon ![i](img/a.svg) in a sentence, and a remote ![x](https://example.org/x.svg) image."
    )
    assert figure_directives(inline, "page.md") == inline


def test_split_keeps_the_caption_of_an_embedded_image(source):
    text = split(source, "pytorch").cells[1].source
    assert text.endswith(
        '![A grey square on white.](attachment:square.svg "The square the text talks about.")'
    )


def test_each_frameworks_copy_of_a_figure_gets_its_caption_and_one_name(source):
    merged = merge(source, _executed(source))
    code = [c for c in merged.cells if c.cell_type == "code"]
    # the same code in every framework: shown once, then each framework's drawing alone (booktools.merge)
    shown, curves, same = code[0], code[1:4], code[4:]
    assert shown.metadata.get("tags", []) == [] and shown.outputs == []
    assert [c.metadata["tags"] for c in curves] == [[fw, "remove-input"] for fw in FRAMEWORKS]
    assert curves[0].metadata["mystnb"]["figure"] == {
        "name": "fig-curve",
        "caption": "The curve rises.",
    }
    for copy in curves[1:]:  # a label names one figure: the others refer to the first copy
        assert copy.metadata["mystnb"]["figure"] == {"caption": "The curve rises."}
        assert copy.metadata["d2l"]["figure_of"] == "fig-curve"
    assert all(c.metadata["mystnb"]["image"]["alt"] for c in curves)
    assert len(same) == 1 and same[0].metadata["mystnb"]["figure"]["name"] == "fig-same"
    nbformat.validate(merged)


def test_a_figure_cells_other_displays_become_text(source):
    """myst-nb would wrap a record's line into the figure too (a second figure with the same name)."""
    merged = merge(source, _executed(source, record=True))
    same = [c for c in merged.cells if c.cell_type == "code"][-1]
    kinds = [(o.output_type, o.get("name")) for o in same.outputs]
    assert kinds == [("display_data", None), ("stream", "stdout")]
    assert same.outputs[1].text == "loss 0.1\n"


def test_a_figure_cell_needs_name_caption_and_alt_text(source):
    source.write_text(SOURCE.replace("  image: {alt: A flat line at height one.}\n", ""))
    with pytest.raises(FigureError, match="lacks alt"):
        merge(source, _executed(source))


def test_two_figures_cannot_share_a_name(source):
    source.write_text(SOURCE.replace("fig-same", "fig-curve"))
    with pytest.raises(FigureError, match="'fig-curve' is used twice"):
        merge(source, _executed(source))


@pytest.mark.parametrize(
    "shape, size",
    [
        ((1, 1, 2, 10), (4.4, 2.2)),  # two queries: 1 inch tall, not squashed
        ((1, 1, 10, 10), (4.4, 4.2)),
        ((1, 1, 4, 3), (3.4, 2.4)),  # small matrices keep 2 x 1 inches
        ((2, 4, 10, 10), (9.5, 7.2)),  # as wide as the text column at most
    ],
)
def test_heatmaps_are_sized_by_their_shape(shape, size):
    fig = plotting.show_heatmaps(np.zeros(shape), "Keys", "Queries", titles=["h"] * shape[1])
    assert tuple(np.round(fig.get_size_inches(), 1)) == pytest.approx(size)
    plotting.plt.close(fig)


def test_heatmap_ticks_are_whole_positions():
    fig = plotting.show_heatmaps(np.ones((1, 1, 2, 10)), "Keys", "Queries")
    fig.canvas.draw()
    ax = fig.axes[0]
    for ticks, n in ((ax.get_xticks(), 10), (ax.get_yticks(), 2)):
        shown = [t for t in ticks if -0.5 <= t <= n - 0.5]
        assert shown and all(float(t).is_integer() for t in shown), ticks
    colour_bar = fig.axes[-1].get_position()
    assert colour_bar.height > 0.5 * ax.get_position().height  # not squashed to a bracket
    plotting.plt.close(fig)


def test_every_tab_shows_its_copy_with_the_same_number(source, tmp_path):
    """A strict Sphinx build of the merged page: the figure that differs by framework is numbered once and each
    tab's copy shows that number; the next figures count on from it."""
    from sphinx.cmd.build import build_main

    src, out = tmp_path / "site", tmp_path / "out"
    src.mkdir()
    (src / "img").mkdir()
    (src / "img" / "square.svg").write_text(SVG)
    # as the book's build: the merged notebook is rendered, never executed (a code cell shown without its outputs
    # would make myst-nb's default mode execute it)
    conf = 'extensions = ["myst_nb", "booktools.sphinx_ext"]\nproject = "t"\nnumfig = True\n'
    conf += 'nb_execution_mode = "off"\n'
    (src / "conf.py").write_text(conf)
    merged = merge(source, _executed(source))
    merged.cells[0].source += "\n\nSee {numref}`fig-curve`."
    nbformat.write(merged, src / "index.ipynb")
    assert build_main(["-W", "-q", "-b", "html", str(src), str(out)]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    numbers = [
        part.split("</span>")[0].strip() for part in html.split('<span class="caption-number">')[1:]
    ]
    assert numbers == ["Fig. 1", "Fig. 2", "Fig. 2", "Fig. 2", "Fig. 3"]
    assert html.count('alt="A line from bottom left to top right."') == 3
    assert 'id="fig-curve"' in html and 'id="fig-curve-pytorch"' in html and "Fig. 2</span>" in html
    assert 'href="#fig-curve"' in html  # the reference resolves to the first copy
