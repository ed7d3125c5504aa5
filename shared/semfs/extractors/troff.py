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

    mdoc = _is_mdoc(text)
    name: list[str] = []  # mdoc's .Nm: the page's name, which a bare .Nm repeats
    for line_in in text.splitlines():
        if skipping:  # a macro definition or an ignored block, up to its ".." (".  ." as Asciidoctor writes it)
            skipping = _END_OF_DEFINITION.match(line_in) is None
            continue
        raw = _COMMENT.sub("", line_in)
        if raw.rstrip() in (".", "'") or (not raw.strip() and line_in.strip()):
            continue  # an empty request, or a line that was all comment
        if raw.startswith((".", "'")):
            request = raw[1:].lstrip()
            macro, _, rest = request.partition(" ")
            macro = macro.strip()
            raw_args = _arguments(rest)
            args = [_unescape(a) for a in raw_args]
            if macro in ("de", "de1", "am", "am1", "ig", "ds", "ds1"):
                skipping = not macro.startswith("ds")  # (a string definition is one line)
                continue
            if mdoc and macro in _MDOC_TEXT:
                if macro == "It":
                    flush()
                if macro == "Nm" and raw_args and not name:
                    name.append(_unescape(raw_args[0]))
                rendered = _mdoc(macro, raw_args, name[0] if name else "")
                if rendered:
                    paragraph.append(rendered)
                continue
            if macro == "TS":
                flush()
                in_table_format = True
                continue
            if macro == "TE":
                flush()
                continue
            if macro == "TH" and args:
                title = f"{args[0]}({args[1]})" if len(args) > 1 else args[0]
            elif macro in ("SH", "SS", "Sh", "Ss"):
                flush()
                heading = " ".join(args).strip()
                if heading:
                    blocks.append(
                        Block(kind="heading", text=heading, level=2 if macro in ("SH", "Sh") else 3,
                              location=Location(paragraph=len(blocks) + 1))
                    )  # fmt: skip
            elif macro in ("URL", "MTO") and args:  # groff's www.tmac links (Asciidoctor's pages): text <address>
                address, text_, after = (*args, "", "")[:3]
                paragraph.append((f"{text_} <{address}>" if text_ else address) + after)
            elif macro == "Nd":  # mdoc's one-line description, which it renders after a dash
                paragraph.append("— " + " ".join(args))
            elif macro in _SPACED:
                paragraph.append(" ".join(args))
            elif macro in _ALTERNATING:
                paragraph.append("".join(args))
            elif macro in _PARAGRAPH:
                flush()
                if macro == "IP" and args:  # the tag of an indented paragraph
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
    words: list[str] = []
    closing: list[str] = []
    glue = False  # Ns: the next word joins the last without a space
    current = macro

    def add(word: str, closer: bool = False) -> None:
        nonlocal glue
        if words and (glue or closer or (_MDOC_PUNCT.fullmatch(word) and word != "...")):  # (an ellipsis is a word)
            words[-1] += word
        else:
            words.append(word)
        glue = False

    def start(name: str) -> None:
        nonlocal current, glue
        current = name
        if name in _MDOC_ENCLOSE:
            opener, closer = _MDOC_ENCLOSE[name]
            words.append(opener)
            glue = True
            closing.append(closer)
        elif name in _MDOC_OPEN:
            words.append(_MDOC_OPEN[name])
            glue = True
        elif name in _MDOC_CLOSE:
            add(_MDOC_CLOSE[name], closer=True)
        elif name == "Ns":
            glue = True
        elif (
            name == "Nm"
            and page_name
            and not (rest and rest[0] not in _MDOC_TEXT and not _MDOC_PUNCT.fullmatch(rest[0]))
        ):
            add(page_name)
        elif name in _MDOC_NAMES:
            add(_MDOC_NAMES[name])

    end = len(raw)  # a line's closing punctuation goes after its enclosures: Dq md5 , → “md5”,
    if _closing_ahead(macro, raw):
        while end and raw[end - 1] != "..." and _MDOC_PUNCT.fullmatch(raw[end - 1]):
            end -= 1
    trailing = raw[end:]
    rest = deque(raw[:end])  # (one pass over the line's words: popleft is O(1))
    start(macro)
    flagged = 0  # the words a Fl has prefixed
    while rest:
        word_or_macro = rest.popleft()
        if word_or_macro in _MDOC_TEXT and word_or_macro != "Ta":  # a callable macro by name (``\&Fl`` is text)
            if current == "Fl" and not flagged:
                add("-")
            flagged = 0
            start(word_or_macro)
            continue
        word = _unescape(word_or_macro)
        if current == "Fl" and not _MDOC_PUNCT.fullmatch(word) and word != "|":
            word, flagged = "-" + word, flagged + 1
        if current == "Xr" and words and word.isdigit() and len(word) <= 2:
            words[-1] += f"({word})"
            continue
        if word:
            add(word)
    if current == "Fl" and not flagged:
        add("-")
    for closer in reversed(closing):
        add(closer, closer=True)
    for mark in trailing:
        add(mark)
    text = " ".join(words)
    return re.sub(r"([\[({<\u201c\u2018\"]) ", r"\1", text)


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
