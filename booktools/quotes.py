"""Figures in prose: prose quotes what this build's notebooks computed, never a number typed in by hand.

A page's prose names a value of a record (:mod:`d2lcore.records`) with the MyST role syntax

    {record}`bleu_held_out.bleu:.2f`

(the record's name, a dot, the field, and optionally a colon and a :meth:`str.format` spec). The role is never
left for Jupyter or Sphinx to read:

* in a framework's notebook, once it is executed (:func:`fill_notebook`), the role becomes the value that the
  notebook's own record holds, so a downloaded notebook reads "a mean BLEU of 0.36" as plain Markdown;
* on the site (:mod:`booktools.record_role`, with :func:`fill`), framework prose gets its framework's value, and
  shared prose the value once if the three frameworks agree, else each framework's: "0.36 (MXNet), 0.37
  (PyTorch), 0.45 (TensorFlow)", in a ``<span class="d2l-per-framework">`` that holds each value in a data
  attribute, from which the book's script (booktools/static/d2l.js) shows only the value of the framework
  selected in the page's tabs. The merge only checks the roles, so that the page's messages for translators
  (:mod:`booktools.i18n`) hold the roles rather than this build's figures.

A role whose record or field is missing is an error (:class:`QuoteError`) naming it: a page never shows a figure
its notebooks did not produce.

Figures typed into prose are checked too (:func:`stray_figures`): a decimal number with two or more decimals, or
a quoted translation (`` `source` => `translation` ``), in the prose of a page must appear in an output of each
notebook that shows the prose, unless the page lists it in its front matter as a figure that does not come from
its outputs (``d2l: {not_outputs: ["0.658"]}``: a worked example, a figure of a paper). Figures that the page's
code contains (hyperparameters such as a learning rate of 0.005) are settings, not results, and need no listing.
The merge fails on a stray figure.
"""

import re
from functools import cache
from html import escape

from babel import Locale
from babel.numbers import get_decimal_symbol, get_group_symbol

from booktools.figures import IMAGE
from booktools.paths import LABELS
from booktools.records import notebook_records
from d2lcore import FRAMEWORKS

ROLE = re.compile(
    r"\{record\}`(?P<name>[A-Za-z_]\w*)\.(?P<field>[A-Za-z_]\w*)(?::(?P<spec>[^`]*))?`"
)
"""A record role: ``{record}`name.field`` or ``{record}`name.field:spec``."""

DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
"""The decimal point of a formatted figure."""
GROUP = re.compile(r"(?<=\d),(?=\d{3})")
"""The thousands separator of a formatted figure ("37,120")."""
PERCENT = re.compile(r"([^#0,.]*)[#0,.]+([^#0,.]*)")
"""A locale's percent pattern: what comes before the number and after it."""
FIGURE = re.compile(r"(?<![\w.])\d*\.\d{2,}(?!\w|\.\d)")
TRANSLATION = re.compile(r"`([^`\n]+)` => `([^`\n]+)`")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_ARXIV = re.compile(r"arXiv:\d+\.\d+")


class QuoteError(ValueError):
    """A role names a record or field that a notebook did not display, or cannot format it."""


def _value(records, match, where):
    name, field, spec = match["name"], match["field"], match["spec"] or ""
    if name not in records:
        shown = ", ".join(sorted(records)) or "none"
        raise QuoteError(
            f"{where}: the prose quotes {match[0]}, but the notebook displayed no record {name!r} "
            f"(it displayed: {shown}); show it with d2l.show_record({name!r}, ...) before the prose"
        )
    fields = records[name]
    if field not in fields:
        raise QuoteError(
            f"{where}: the prose quotes {match[0]}, but the record {name!r} has no field {field!r} "
            f"(its fields: {', '.join(sorted(fields))})"
        )
    try:
        return format(fields[field], spec)
    except (ValueError, TypeError) as err:
        raise QuoteError(
            f"{where}: {match[0]} cannot format {fields[field]!r} with {spec!r}: {err}"
        ) from None


@cache
def _locale(language):
    return Locale.parse(language or "en")


def decimal_symbol(language):
    """The decimal symbol of a Sphinx language code such as "ru" or "zh_CN" (English where none is set)."""
    return get_decimal_symbol(_locale(language))


def localised(value, language):
    """A formatted figure ("0.36", "46%", "37,120") as ``language`` writes it (Babel's locale data): its decimal
    symbol, its thousands separator and its percent sign where the language puts it ("0,36" and "37 120" in
    Russian, "%46" and "37.120" in Turkish)."""
    if not language:
        return value
    group = get_group_symbol(_locale(language))
    parts = [DECIMAL.sub(decimal_symbol(language), part) for part in GROUP.split(value)]
    value = group.join(parts)
    if value.endswith("%"):
        pattern = (
            _locale(language).percent_formats[None].pattern
        )  # "#,##0%", "%#,##0", "#,##0\xa0%"
        prefix, suffix = PERCENT.fullmatch(pattern).groups()
        value = prefix + value[:-1] + suffix
    return value


def fill(text, records, frameworks=FRAMEWORKS, where="prose", html=False, language=None):
    """``text`` with each record role replaced by its value. ``records``: {framework: {name: fields}};
    ``frameworks``: those whose notebooks show the text. One framework gives its value; several give the
    value once if they agree, else "v (MXNet), w (PyTorch), ...", which ``html`` wraps in a span that
    also holds each framework's value (``data-pytorch="w"``), for the page's script. ``language``: the text's
    (:func:`localised`); where it writes a decimal comma, the frameworks' values are separated by semicolons."""
    separator = "; " if decimal_symbol(language) == "," else ", "

    def value(match):
        values = {
            fw: localised(_value(records[fw], match, f"{where} [{fw}]"), language)
            for fw in frameworks
        }
        if len(set(values.values())) == 1:
            return next(iter(values.values()))
        labelled = separator.join(f"{v} ({LABELS[fw]})" for fw, v in values.items())
        if not html:
            return labelled
        data = " ".join(f'data-{fw}="{escape(v)}"' for fw, v in values.items())
        return f'<span class="d2l-per-framework" {data}>{escape(labelled)}</span>'

    return ROLE.sub(value, text)


def fill_notebook(nb, where="notebook", language=None):
    """Replace the roles in the markdown cells of an executed framework notebook by the values of its own
    records (in place), as ``language`` writes figures; returns the notebook."""
    framework = nb.metadata.get("d2l", {}).get("framework", "notebook")
    records = {framework: notebook_records(nb)}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = fill(
                cell.source,
                records,
                (framework,),
                f"{where}, cell {cell.get('id')}",
                language=language,
            )
    return nb


def _prose(text):
    """The prose of a markdown cell without math, link targets and the record roles."""
    text = ROLE.sub(" ", text)
    text = _ARXIV.sub(" ", IMAGE.sub(" ", text))  # alt text and caption describe a drawing
    text = _MATH.sub(" ", text)
    return _LINK_TARGET.sub("]", text)


def quoted(text):
    """The figures and translations that prose typed in: (figures, translations) in order of appearance; the
    figures outside code spans and math, the translations as (source, translation) pairs."""
    prose = _prose(text)
    translations = TRANSLATION.findall(prose)
    figures = FIGURE.findall(_CODE.sub(" ", prose))
    return figures, translations


def code_figures(nb):
    """The decimal figures written in the code cells of a notebook: settings, which prose may name."""
    return {f for cell in nb.cells if cell.cell_type == "code" for f in FIGURE.findall(cell.source)}


def output_text(cell):
    """All the text that a code cell's outputs show (streams, plain text, errors)."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
        elif out.get("output_type") == "error":
            parts.append(out.get("evalue", ""))
    return "".join(part if isinstance(part, str) else "".join(part) for part in parts)


def stray_figures(text, notebooks, allowed=()):
    """What the prose ``text`` quotes that is not in the outputs: messages, empty if none. ``notebooks``:
    {framework: executed notebook} of the frameworks that show the text; ``allowed``: figures and
    translations (as "source => translation") the page declares not to come from its outputs."""
    figures, translations = quoted(text)
    shown = {fw: "\n".join(output_text(c) for c in nb.cells) for fw, nb in notebooks.items()}
    problems = []
    for figure in figures:
        if figure in allowed:
            continue
        pattern = re.compile(rf"(?<![\d.]){re.escape(figure)}(?!\d)")  # 0.45 is not in 0.451
        lacking = [LABELS[fw] for fw, out in shown.items() if not pattern.search(out)]
        if lacking:
            problems.append(
                f"the prose quotes {figure}, which no output of {', '.join(lacking)} shows: quote a record "
                "({record}`name.field`), state what holds for any build, or list it under d2l.not_outputs"
            )
    for source, target in translations:
        if f"{source} => {target}" in allowed:
            continue
        lacking = [LABELS[fw] for fw, out in shown.items() if f"{source} => {target}" not in out]
        if lacking:
            problems.append(
                f"the prose quotes the translation `{source}` => `{target}`, which no output of "
                f"{', '.join(lacking)} shows"
            )
    return problems
