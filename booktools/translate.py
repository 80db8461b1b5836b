"""A page's MyST markdown in another language, from its catalogue (:mod:`booktools.i18n`): for the notebooks.

Sphinx translates the site itself: it looks each paragraph, heading, list item, table cell, caption, alt text and
dropdown title of a page up in the page's catalogue by its MyST source, with its lines joined by spaces. The
per-framework notebooks are not built by Sphinx, so their markdown cells are translated here the same way: the
markdown is parsed with myst-parser's own parser (the same blocks that Sphinx sees), and each block whose message
has a translation is replaced by it, keeping its list marker, heading marker or indentation. Directives in colon
fences (dropdowns, the note for readers of D2L) keep their fences and options; their titles and bodies are
translated. An image alone in a paragraph, ``![alt](path "caption")``, gets its alt text and caption translated.

:func:`translate` returns the blocks it found no translation for, so that a caller can refuse to publish an
edition with English paragraphs in it.
"""

import re
from functools import cache

from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from booktools.figures import IMAGE

DIRECTIVE = re.compile(r"\{(?P<name>[\w-]+)\}[ \t]*(?P<title>.*)")


@cache
def _parser():
    config = MdParserConfig(enable_extensions={"colon_fence", "dollarmath", "amsmath"})
    return create_md_parser(config, RendererHTML)


def message(content):
    """The catalogue's message of a block whose source is ``content`` (as Sphinx extracts it)."""
    return content.replace("\n", " ").strip()


def _image(text, catalogue, missing):
    """A paragraph that is one image: its alt text and caption translated."""

    def one(match):
        alt, target, caption = match.groups()
        new_alt = _lookup(alt, catalogue, missing)
        title = f' "{_lookup(caption, catalogue, missing)}"' if caption else ""
        return f"![{new_alt}]({target}{title})"

    return IMAGE.sub(one, text)


def _lookup(text, catalogue, missing):
    key = message(text)
    if not key:
        return text
    if key in catalogue:
        return catalogue[key]
    missing.append(key)
    return text


def translate(text, catalogue):
    """``text`` (MyST markdown) with every block translated from ``catalogue`` ({message: translation});
    returns (translated text, [messages without a translation])."""
    missing = []
    return _translate(text, catalogue, missing), missing


def _translate(text, catalogue, missing):
    lines = text.split("\n")
    replacements = {}  # first line -> (last line + 1, new lines)
    tokens = _parser().parse(text)
    for i, token in enumerate(tokens):
        if token.map is None or token.map[0] in replacements:
            continue
        start, end = token.map
        if token.type == "colon_fence":
            replacements[start] = (end, _directive(lines[start:end], token, catalogue, missing))
        elif token.type == "inline" and tokens[i - 1].type in ("paragraph_open", "heading_open"):
            if _inside(start, replacements):
                continue
            replacements[start] = (end, _block(lines[start:end], token.content, catalogue, missing))
        elif token.type == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            if _inside(start, replacements) or not token.content.strip():
                continue
            end_, row = replacements.get(start, (end, lines[start:end]))
            new = _lookup(token.content, catalogue, missing)
            row = [row[0].replace(token.content, new, 1), *row[1:]]
            replacements[start] = (end_, row)
    out, n = [], 0
    while n < len(lines):
        if n in replacements:
            end, new = replacements[n]
            out.extend(new)
            n = end
        else:
            out.append(lines[n])
            n += 1
    return "\n".join(out)


def _inside(line, replacements):
    """Whether ``line`` lies inside a block already replaced (a directive's body)."""
    return any(start < line < end for start, (end, _) in replacements.items())


def _block(lines, content, catalogue, missing):
    """A paragraph or heading (``lines`` of the source, ``content`` its text) as one translated line, with the
    first line's marker (``## ``, ``1. ``, ``- ``, indentation) kept."""
    first = content.split("\n", 1)[0]
    at = lines[0].find(first)
    prefix = lines[0][:at] if at >= 0 else ""
    if IMAGE.fullmatch(content.strip()):
        return [prefix + _image(content.strip(), catalogue, missing)]
    return [prefix + _lookup(content, catalogue, missing)]


def _directive(lines, token, catalogue, missing):
    """A colon-fence directive (``:::{dropdown} Title`` ... ``:::``): its title and body translated, its
    fences, options and indentation kept."""
    match = DIRECTIVE.fullmatch(token.info.strip())
    if match is None:
        return lines
    fence = lines[0]
    indent = fence[: len(fence) - len(fence.lstrip())]
    title = match["title"]
    head = fence
    if title:
        head = fence[: fence.rindex(title)] + _lookup(title, catalogue, missing)
    body = lines[1:-1]
    options = []
    while body and body[0].strip().startswith(":") and not body[0].strip().startswith(":::"):
        options.append(body.pop(0))
    dedented = [line[len(indent) :] if line.startswith(indent) else line for line in body]
    translated = _translate("\n".join(dedented), catalogue, missing).split("\n")
    return [head, *options, *[indent + line if line else line for line in translated], lines[-1]]
