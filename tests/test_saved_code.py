"""The code that pages show as part of d2lcore is the package's code (see booktools/saved.py), and pages run what
they show."""

import ast

import pytest

from booktools.cells import frameworks_of
from booktools.paths import rel, sources
from booktools.saved import d2l_uses_of_shown_names, mismatches, page_code, saved_cells
from booktools.split import read_source

CELLS = [(source, *cell) for source in sources() for cell in saved_cells(source)]


def test_pages_show_package_code():
    assert len(CELLS) >= 60, "expected the saved cells of every page with code"
    pages = {rel(c[0]).stem for c in CELLS}
    assert {
        "bahdanau-attention",
        "transformer",
        "transformer-decoding",
        "multihead-attention",
    } <= pages


@pytest.mark.parametrize(
    ("source", "cell_id", "package_file", "code"),
    CELLS,
    ids=[f"{rel(c[0]).stem}-{c[1]}" for c in CELLS],
)
def test_page_and_package_agree(source, cell_id, package_file, code):
    assert mismatches(code, package_file) == [], f"{rel(source)} cell {cell_id}"


def test_a_changed_line_is_caught():
    """The comparison is not vacuous: one changed constant, or a renamed helper, makes it fail."""
    source, cell_id, package_file, code = next(c for c in CELLS if "train_nw" in c[3])
    assert mismatches(code.replace("epoch + 1", "epoch + 2"), package_file) == [
        f"train_nw differs from its definition in {package_file}"
    ]
    assert mismatches(code.replace("d2l.Animator", "d2l.Animator2"), package_file) != []
    assert mismatches("x = 1", package_file) == ["the cell defines no function or class"]
    assert "does not exist" in mismatches(code, "d2lcore/nowhere.py")[0]


def test_comments_and_d2l_prefix_are_ignored(tmp_path):
    (tmp_path / "pkg.py").write_text("def f(x):\n    return check_shapes(x=(x, 'n'))\n")
    page = "# a comment\ndef f(x):  # another\n    return d2l.check_shapes(\n        x=(x, 'n')\n    )\n"
    assert mismatches(page, "pkg.py", root=tmp_path) == []
    assert mismatches(page.replace("'n'", "'m'"), "pkg.py", root=tmp_path) != []


def test_a_missing_registration_is_caught():
    """A definition's module-level statements are part of what the page must show: TensorFlow's GRU without the
    ``register_converter`` call that names its weights fails the check (a reader training the shown class would
    silently lose the shared initial weights)."""
    source, cell_id, package_file, code = next(
        c for c in CELLS if c[2] == "d2lcore/tensorflow/rnn.py" and "class GRU(" in c[3]
    )
    assert mismatches(code, package_file) == []
    registration = "register_converter(GRU, gru_export, gru_load)"
    assert registration in code
    assert mismatches(code.replace(registration, ""), package_file) == [
        f"the cell lacks the statement `{registration}` of {package_file}, needed by GRU"
    ]


def test_statements_are_compared_and_written(tmp_path):
    (tmp_path / "pkg.py").write_text(
        "import os\n\nX = 1\n\n\nclass A:\n    pass\n\n\ndef _helper(c):\n    return c\n\n\n"
        "register(A, _helper)\nother(X)\n"
    )
    code = page_code("pkg.py", ["A"], root=tmp_path)
    assert code == "class A:\n    pass\n\n\ndef _helper(c):\n    return c\n\n\nregister(A, _helper)"
    assert mismatches(code, "pkg.py", root=tmp_path) == []
    assert mismatches(
        code.replace("register(A, _helper)", "register(A, _other)"), "pkg.py", root=tmp_path
    )


def test_pages_import_no_private_name():
    """A page imports public names only: what it calls of d2lcore is in the interface (``d2l.name``) or a public
    name of a d2lcore module."""
    found = []
    for source in sources():
        for cell in read_source(source).cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("d2lcore"):
                    found += [
                        f"{rel(source).stem}: {a.name}"
                        for a in node.names
                        if a.name.startswith("_")
                    ]
                    if node.module in ("d2lcore.transformer",):
                        found += [f"{rel(source).stem}: {node.module}"]
    assert found == []


@pytest.mark.parametrize("source", sources(), ids=lambda s: rel(s).stem)
def test_pages_run_what_they_show(source):
    """Once a page has shown a definition, that framework's notebook calls the shown one, not ``d2l.``'s."""
    assert d2l_uses_of_shown_names(source) == []


def test_shown_use_check_is_not_vacuous(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"
        "```{code-cell} ipython3\n:tags: [pytorch]\n\n# Saved in d2lcore: d2lcore/torch/multihead.py\n"
        "def transpose_qkv(X, num_heads):\n    pass\n```\n\n"
        "```{code-cell} ipython3\n\nY = d2l.transpose_qkv(X, 2)\n```\n\n"
        "```{code-cell} ipython3\n:tags: [pytorch]\n\nY = d2l.transpose_qkv(X, 2)\n```\n"
    )
    cells = [c for c in read_source(page).cells if c.cell_type == "code"]
    assert frameworks_of(cells[2]) == ["pytorch"]
    # the shared cell also runs in MXNet and TensorFlow, which have not defined it: only the PyTorch cell counts
    assert d2l_uses_of_shown_names(page) == [(cells[2].id, "transpose_qkv")]


@pytest.mark.parametrize("block", ["TransformerEncoderBlock", "TransformerDecoderBlock"])
def test_mxnet_transformer_blocks_read_like_pytorch(block):
    """Taught code reads line for line: each Transformer block's MXNet tab is at most 1.3 times as long as
    PyTorch's (MXNet's graph machinery lives in MultiHeadAttention, not in the blocks)."""
    lengths = {}
    for source in sources("transformer"):
        for cell in read_source(source).cells:
            if cell.cell_type == "code" and f"\nclass {block}(" in "\n" + cell.source:
                lengths[frameworks_of(cell)[0]] = len(cell.source.splitlines())
    assert set(lengths) == {"mxnet", "pytorch", "tensorflow"}
    assert lengths["mxnet"] <= 1.3 * lengths["pytorch"], lengths


def test_mxnet_bahdanau_loop_reads_like_the_equations():
    """The MXNet Bahdanau tab calls the page's AdditiveAttention layer once per target step, with the encoder's
    outputs as keys and values: MXNet's operators for that step (tanh, the softmax, dropout) are the layer's,
    not written out in the decoder."""
    cells = [
        cell.source
        for cell in read_source(sources("bahdanau")[0]).cells
        if cell.cell_type == "code"
        and frameworks_of(cell) == ["mxnet"]
        and "\nclass Seq2SeqAttentionDecoder(" in "\n" + cell.source
    ]
    assert len(cells) == 1
    assert "self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)" in cells[0]
    inline = ("batch_dot", "activation", "softmax", "use_length", "self.dropout", ".W_k(", ".W_q(")
    assert [op for op in inline if op in cells[0]] == []
