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
from collections import deque
from collections.abc import Sequence
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
    "rh": "\u261e", "at": "@",
    "->": "\u2192", "<-": "\u2190", "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "+-": "\u00b1",
    "sc": "\u00a7", "ps": "\u00b6", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a", "ua": "\u2191",
    "da": "\u2193", "eu": "\u20ac", "Eu": "\u20ac", "ct": "\u00a2", "Po": "\u00a3", "Ye": "\u00a5",
}  # fmt: skip
_STRINGS = {
    "lq": "\u201c", "rq": "\u201d", "R": "\u00ae", "Tm": "\u2122", "S": "", "HF": "",
    # mdoc's predefined strings
    "Lt": "<", "Gt": ">", "Le": "\u2264", "Ge": "\u2265", "Ne": "\u2260", "Am": "&", "Ba": "|", "Lq": "\u201c",
    "Rq": "\u201d", "q": '"', "Pi": "\u03c0", "Aq": "'",
}  # fmt: skip
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
    """A man or mdoc page as a reader sees it rendered: its sections as headings, its paragraphs, its
    tables' rows; macro definitions and layout requests read as nothing."""
    reader = _ManReader(mdoc=_is_mdoc(text))
    for line in text.splitlines():
        reader.line(line)
    reader.flush()
    return ExtractedDocument(blocks=reader.blocks, title=_name_line(reader.blocks) or reader.title)


class _ManReader:
    """The state of one page read line by line: the blocks so far, the paragraph being gathered."""

    def __init__(self, mdoc: bool) -> None:
        self.mdoc = mdoc
        self.blocks: list[Block] = []
        self.paragraph: list[str] = []
        self.title: str | None = None
        self.skipping = False  # inside a macro definition or an ignored block
        self.in_table_format = False  # tbl's options and format lines
        self.name: list[str] = []  # mdoc's .Nm: the page's name, which a bare .Nm repeats

    def flush(self) -> None:
        body = " ".join(" ".join(self.paragraph).split())
        if body:
            self.blocks.append(Block(kind="paragraph", text=body, location=Location(paragraph=len(self.blocks) + 1)))
        self.paragraph.clear()

    def line(self, line_in: str) -> None:
        if self.skipping:  # a definition or an ignored block, up to its ".." (".  ." as Asciidoctor writes it)
            self.skipping = _END_OF_DEFINITION.match(line_in) is None
            return
        raw = _COMMENT.sub("", line_in)
        if raw.rstrip() in (".", "'") or (not raw.strip() and line_in.strip()):
            return  # an empty request, or a line that was all comment
        if raw.startswith((".", "'")):
            macro, _, rest = raw[1:].lstrip().partition(" ")
            self.request(macro.strip(), _arguments(rest))
        elif self.in_table_format:  # tbl: options and format lines end at the one ending with '.'
            self.in_table_format = not raw.rstrip().endswith(".")
        else:
            self.paragraph.append(_unescape(raw).replace("\t", " | ") if "\t" in raw else _unescape(raw))
            if not raw.strip():
                self.flush()

    def request(self, macro: str, raw_args: list[str]) -> None:
        """One request line: a definition skipped, an mdoc line rendered, a table's bounds, or a man macro."""
        if macro in ("de", "de1", "am", "am1", "ig", "ds", "ds1"):
            self.skipping = not macro.startswith("ds")  # (a string definition is one line)
        elif self.mdoc and macro in _MDOC_TEXT:
            if macro == "It":
                self.flush()
            if macro == "Nm" and raw_args and not self.name:
                self.name.append(_unescape(raw_args[0]))
            rendered = _mdoc(macro, raw_args, self.name[0] if self.name else "")
            if rendered:
                self.paragraph.append(rendered)
        elif macro in ("TS", "TE"):
            self.flush()
            self.in_table_format = macro == "TS"
        else:
            self.man_macro(macro, [_unescape(a) for a in raw_args])

    def man_macro(self, macro: str, args: list[str]) -> None:
        """A man macro with text: the title, a section, a link, spaced or alternating fonts, a paragraph break.
        Any other request is layout or programming, nothing to read."""
        if macro == "TH" and args:
            self.title = f"{args[0]}({args[1]})" if len(args) > 1 else args[0]
        elif macro in ("SH", "SS", "Sh", "Ss"):
            self.flush()
            heading = " ".join(args).strip()
            if heading:
                level = 2 if macro in ("SH", "Sh") else 3
                location = Location(paragraph=len(self.blocks) + 1)
                self.blocks.append(Block(kind="heading", text=heading, level=level, location=location))
        elif macro in ("URL", "MTO") and args:  # groff's www.tmac links (Asciidoctor's pages): text <address>
            address, text_, after = (*args, "", "")[:3]
            self.paragraph.append((f"{text_} <{address}>" if text_ else address) + after)
        elif macro == "Nd":  # mdoc's one-line description, which it renders after a dash
            self.paragraph.append("— " + " ".join(args))
        elif macro in _SPACED:
            self.paragraph.append(" ".join(args))
        elif macro in _ALTERNATING:
            self.paragraph.append("".join(args))
        elif macro in _PARAGRAPH:
            self.flush()
            if macro == "IP" and args:  # the tag of an indented paragraph
                self.paragraph.append(args[0])


_END_OF_DEFINITION = re.compile(r"[.']\s*\.")

# mdoc (BSD's manual macros: OpenSSH's pages, among others): the macros whose arguments are text, and what
# they add around it. A line's own macro may call others by name (``.It Fl a Ar bind_address`` is "-a
# bind_address"); a name escaped with ``\&`` is text. Enclosures run to the end of the line.
_MDOC_ENCLOSE = {
    "Op": ("[", "]"), "Pq": ("(", ")"), "Bq": ("[", "]"), "Brq": ("{", "}"), "Aq": ("<", ">"),
    "Dq": ("\u201c", "\u201d"), "Sq": ("\u2018", "\u2019"), "Qq": ('"', '"'), "Ql": ("\u2018", "\u2019"),
}  # fmt: skip
_MDOC_OPEN = {"Oo": "[", "Po": "(", "Bo": "[", "Bro": "{", "Ao": "<", "Do": "\u201c", "So": "\u2018", "Qo": '"'}
_MDOC_CLOSE = {"Oc": "]", "Pc": ")", "Bc": "]", "Brc": "}", "Ac": ">", "Dc": "\u201d", "Sc": "\u2019", "Qc": '"'}
_MDOC_PLAIN = {
    "Ar", "Cm", "Pa", "Ev", "Dv", "Sy", "Em", "Li", "Ic", "Va", "No", "Ad", "An", "Cd", "Er", "Fa", "Fn", "Ft",
    "Ms", "Sx", "Tn", "Ux", "Bx", "At", "Nx", "Fx", "Ox", "Bsx", "Dl", "D1", "It", "Nm", "Fl", "Xr", "Ns", "Lk",
    "Mt", "Ta", "Pf", "Xo", "Xc", "Lb", "In", "Fd", "Vt", "Ot", "Rs", "%A", "%T", "%B", "%J", "%D", "%N",
}  # fmt: skip
_MDOC_TEXT = _MDOC_PLAIN | set(_MDOC_ENCLOSE) | set(_MDOC_OPEN) | set(_MDOC_CLOSE)
_MDOC_PUNCT = re.compile(r"[.,:;)\]?!]+")


_MDOC_NAMES = {"Ux": "UNIX", "Bx": "BSD", "Nx": "NetBSD", "Fx": "FreeBSD", "Ox": "OpenBSD", "Bsx": "BSD/OS"}


def _closing_ahead(macro: str, tokens: Sequence[str]) -> bool:
    """Whether the line opens an enclosure its trailing punctuation should follow."""
    return macro in _MDOC_ENCLOSE or any(t in _MDOC_ENCLOSE for t in tokens)


def _is_word(token: str) -> bool:
    """An mdoc argument that is text: neither a callable macro nor closing punctuation."""
    return token not in _MDOC_TEXT and not _MDOC_PUNCT.fullmatch(token)


def _is_mdoc(text: str) -> bool:
    return any(line.startswith((".Dd", ".Dt ")) for line in text[:20_000].splitlines()[:400])


def _mdoc(macro: str, raw: list[str], page_name: str) -> str:
    """One mdoc request line as a reader sees it: ``Op Fl a Ar file`` → ``[-a file]``."""
    end = len(raw)  # a line's closing punctuation goes after its enclosures: Dq md5 , → “md5”,
    if _closing_ahead(macro, raw):
        while end and raw[end - 1] != "..." and _MDOC_PUNCT.fullmatch(raw[end - 1]):
            end -= 1
    line = _MdocLine(page_name, deque(raw[:end]))  # (one pass over the line's words: popleft is O(1))
    line.start(macro)
    while line.rest:
        line.take(line.rest.popleft())
    line.end_flag()
    for closer in reversed(line.closing):
        line.add(closer, closer=True)
    for mark in raw[end:]:
        line.add(mark)
    return re.sub(r"([\[({<\u201c\u2018\"]) ", r"\1", " ".join(line.words))


class _MdocLine:
    """The words of one mdoc line as they are rendered, and the macro now in force."""

    def __init__(self, page_name: str, rest: deque[str]) -> None:
        self.page_name = page_name
        self.rest = rest
        self.words: list[str] = []
        self.closing: list[str] = []
        self.glue = False  # Ns: the next word joins the last without a space
        self.current = ""
        self.flagged = 0  # the words a Fl has prefixed

    def add(self, word: str, closer: bool = False) -> None:
        joins = self.glue or closer or (_MDOC_PUNCT.fullmatch(word) and word != "...")  # (an ellipsis is a word)
        if self.words and joins:
            self.words[-1] += word
        else:
            self.words.append(word)
        self.glue = False

    def start(self, name: str) -> None:
        """A macro takes over the line: its opener, closer, name or glue."""
        self.current = name
        if name in _MDOC_ENCLOSE:
            opener, closer = _MDOC_ENCLOSE[name]
            self.words.append(opener)
            self.glue = True
            self.closing.append(closer)
        elif name in _MDOC_OPEN:
            self.words.append(_MDOC_OPEN[name])
            self.glue = True
        elif name in _MDOC_CLOSE:
            self.add(_MDOC_CLOSE[name], closer=True)
        elif name == "Ns":
            self.glue = True
        elif name == "Nm" and self.page_name and not (self.rest and _is_word(self.rest[0])):
            self.add(self.page_name)
        elif name in _MDOC_NAMES:
            self.add(_MDOC_NAMES[name])

    def end_flag(self) -> None:
        """A Fl with no word of its own is a lone dash."""
        if self.current == "Fl" and not self.flagged:
            self.add("-")

    def take(self, word_or_macro: str) -> None:
        if word_or_macro in _MDOC_TEXT and word_or_macro != "Ta":  # a callable macro by name (``\&Fl`` is text)
            self.end_flag()
            self.flagged = 0
            self.start(word_or_macro)
            return
        word = _unescape(word_or_macro)
        if self.current == "Fl" and not _MDOC_PUNCT.fullmatch(word) and word != "|":
            word, self.flagged = "-" + word, self.flagged + 1
        if self.current == "Xr" and self.words and word.isdigit() and len(word) <= 2:
            self.words[-1] += f"({word})"
        elif word:
            self.add(word)


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
