"""Manual pages (troff with the ``man`` macros) as text: headings, paragraphs, option tags, tables.

Why not groff, the maintained renderer: troff is a programming language that reads files. ``.so``, ``.cf``
and ``.mso`` include any file the process can read (``/proc/self/environ`` holds a Lambda's credentials),
and requests can be renamed, aliased or reached through a changed control or escape character, so a
blocklist in front of groff is a guess. This reader executes nothing: it knows the ``man`` macros a page
is written with and takes their text; every other request is dropped, and escapes become the characters
they name. It reads for search, not for layout: each line once, in linear time.
"""

from __future__ import annotations

import re
from itertools import pairwise

from semfs.domain.models import Block, ExtractedDocument, Location

# \fB, \f(CW, \f[BI]; \s+2; \*(lq, \*[name]; \(em; \[em]; \-; \e; any other one-character escape
_ESCAPE = re.compile(
    r"\\(?:f(?:\(..|\[[^\]\n]{0,32}\]|.)"
    r"|s[+-]?(?:\d{1,2}|\(\d\d|\[\d{1,3}\])"
    r"|\*(?:\(..|\[[^\]\n]{0,32}\]|.)"
    r"|\((..)"
    r"|\[([^\]\n]{0,32})\]"
    r"|[hvwlLoDbxXNRSYZ]'[^'\n]{0,128}'"
    r"|n(?:\(..|\[[^\]\n]{0,32}\]|.)"
    r"|(.))"
)
# troff's special character names (groff_char) a page uses for text; others are dropped
_CHARS = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "mi": "-", "bu": "\u2022", "aq": "'", "dq": '"', "lq": "\u201c",
    "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "mu": "\u00d7",
    "de": "\u00b0", "ga": "`", "ha": "^", "ti": "~", "rs": "\\", "sl": "/", "ba": "|", "or": "|", "lh": "\u261c",
    "rh": "\u261e", "->": "\u2192", "<-": "\u2190", "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "+-": "\u00b1",
    "sc": "\u00a7", "ps": "\u00b6", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a", "ua": "\u2191",
    "da": "\u2193", "eu": "\u20ac", "Eu": "\u20ac", "ct": "\u00a2", "Po": "\u00a3", "Ye": "\u00a5",
}  # fmt: skip
_STRINGS = {"lq": "\u201c", "rq": "\u201d", "R": "\u00ae", "Tm": "\u2122", "S": "", "HF": ""}
_ONE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t", "'": "'", "`": "`", ".": "."}

# macros whose arguments are text, shown in one font (joined with spaces) or alternating fonts (joined)
_SPACED = {"B", "I", "SM", "SB", "TQ", "OP", "UR", "MT", "Nm", "Ar", "Fl", "Cm", "Pa", "Sy", "Em", "Dv", "Ev"}
_ALTERNATING = {"BR", "BI", "IB", "IR", "RB", "RI"}
_PARAGRAPH = {"PP", "LP", "P", "TP", "IP", "HP", "sp", "br", "RS", "RE", "EX", "EE", "Pp", "Bl", "El", "It"}
_COMMENT = re.compile(r'(?<!\\)\\["#].*')  # \" (and groff's \#) comment out the rest of the line


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        named, bracketed, single = m.group(1), m.group(2), m.group(3)
        whole = m.group(0)
        if named is not None:
            return _CHARS.get(named, "")
        if bracketed is not None:
            return _CHARS.get(
                bracketed, chr(int(bracketed[1:], 16)) if re.fullmatch(r"u[0-9A-F]{4,6}", bracketed) else ""
            )
        if whole.startswith("\\*"):
            name = whole[3:5] if whole[2] == "(" else whole[3:-1] if whole[2] == "[" else whole[2]
            return _STRINGS.get(name, "")
        if single is not None:
            return _ONE.get(single, "")  # \& \| \^ \c \% \{ \} and the rest: nothing to read
        return ""  # fonts, sizes, motions, registers

    return _ESCAPE.sub(one, text)


def _arguments(rest: str) -> list[str]:
    """A request's arguments: space-separated, double quotes group (a doubled quote is a quote)."""
    out, current, quoted, i = [], "", False, 0
    while i < len(rest):
        ch = rest[i]
        if ch == '"':
            if quoted and rest[i + 1 : i + 2] == '"':
                current += '"'
                i += 1
            else:
                quoted = not quoted
        elif ch in " \t" and not quoted:
            if current:
                out.append(current)
            current = ""
        else:
            current += ch
        i += 1
    if current:
        out.append(current)
    return out


def looks_like_man(head: bytes) -> bool:
    """A page's first lines hold ``.TH`` (man) or ``.Dd``/``.Dt`` (mdoc), after its comments and, in a page
    pod2man wrote, its preamble of macro definitions (about 70 lines: dpkg's and debconf's pages)."""
    lines = head.splitlines()[:400]
    return any(line.startswith((b".TH ", b".Dd", b".Dt ")) for line in lines)


def extract_man(text: str) -> ExtractedDocument:
    blocks: list[Block] = []
    paragraph: list[str] = []
    title: str | None = None
    skipping = False
    in_table_format = False

    def flush() -> None:
        body = " ".join(" ".join(paragraph).split())
        if body:
            blocks.append(Block(kind="paragraph", text=body, location=Location(paragraph=len(blocks) + 1)))
        paragraph.clear()

    for line_in in text.splitlines():
        if skipping:  # a macro definition or an ignored block, up to its ".."
            skipping = not line_in.startswith("..")
            continue
        raw = _COMMENT.sub("", line_in)
        if raw.rstrip() in (".", "'") or (not raw.strip() and line_in.strip()):
            continue  # an empty request, or a line that was all comment
        if raw.startswith((".", "'")):
            request = raw[1:].lstrip()
            name, _, rest = request.partition(" ")
            name = name.strip()
            args = [_unescape(a) for a in _arguments(rest)]
            if name in ("de", "de1", "am", "ig", "ds"):
                skipping = name != "ds"  # (a string definition is one line)
                continue
            if name == "TS":
                flush()
                in_table_format = True
                continue
            if name == "TE":
                flush()
                continue
            if name == "TH" and args:
                title = f"{args[0]}({args[1]})" if len(args) > 1 else args[0]
            elif name in ("SH", "SS", "Sh", "Ss"):
                flush()
                heading = " ".join(args).strip()
                if heading:
                    blocks.append(
                        Block(kind="heading", text=heading, level=2 if name in ("SH", "Sh") else 3,
                              location=Location(paragraph=len(blocks) + 1))
                    )  # fmt: skip
            elif name == "Nd":  # mdoc's one-line description, which it renders after a dash
                paragraph.append("— " + " ".join(args))
            elif name in _SPACED:
                paragraph.append(" ".join(args))
            elif name in _ALTERNATING:
                paragraph.append("".join(args))
            elif name in _PARAGRAPH:
                flush()
                if name == "IP" and args:  # the tag of an indented paragraph
                    paragraph.append(args[0])
            continue  # any other request: layout or programming, nothing to read
        line = raw
        if in_table_format:  # tbl: options and format lines end at the one ending with '.'
            in_table_format = not line.rstrip().endswith(".")
            continue
        paragraph.append(_unescape(line).replace("\t", " | ") if "\t" in line else _unescape(line))
        if not line.strip():
            flush()
    flush()
    return ExtractedDocument(blocks=blocks, title=_name_line(blocks) or title)


def _name_line(blocks: list[Block]) -> str | None:
    """The NAME section's line, the page's own one-line title: ``deb-symbols - Debian's extended shared
    library information file`` (man) or ``node`` + ``.Nd`` (mdoc), with the dash a reader expects."""
    for heading, body in pairwise(blocks):
        if heading.kind == "heading" and heading.text.strip().upper() == "NAME" and body.kind == "paragraph":
            line = " ".join(body.text.split())
            if " - " in line or " — " in line:
                return line.replace(" - ", " — ", 1)[:120]
            return None
    return None
