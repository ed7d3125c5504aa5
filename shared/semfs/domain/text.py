"""Small, pure text helpers shared by chunking, enrichment and snippets."""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

WORD_RE = re.compile(r"[^\W_][\w'’-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)\]]*\s+(?=[\"“(\[]?[A-Z0-9])")
_WS = re.compile(r"[ \t\f\v\u00a0]+")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each etc few for from further had hadn't has hasn't have haven't having he her
    here hers herself him himself his how however i if in into is isn't it it's its itself just let's
    may me might more most must mustn't my myself no nor not of off on once only or other ought our ours
    ourselves out over own per same shall she should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they this those through to too under until up upon
    us very via was wasn't we were weren't what when where which while who whom why will with within
    without won't would wouldn't you your yours yourself yourselves new one two three page section
    document file please regards dear hi hello thanks thank see use used using get got every within least including like
    many much well make made still even since whether yet already always often another""".split()
)


def normalise(text: str) -> str:
    """NFKC, unify whitespace inside lines, drop control characters, collapse blank-line runs."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    lines = [_WS.sub(" ", line).strip() for line in text.splitlines()]
    out: list[str] = []
    blank = 0
    for line in lines:
        if line:
            blank = 0
            out.append(line)
        else:
            blank += 1
            if blank == 1 and out:
                out.append("")
    return "\n".join(out).strip()


def encodable(text: str, replacement: str | None = None) -> str:
    """``text`` as valid Unicode. A file name the file system's encoding could not decode reaches Python
    with each bad byte as a lone surrogate (``bad\\udcff.txt`` for the bytes ``bad\\xff.txt``), which no
    UTF-8 encoder, SQLite, JSON or terminal takes. Each becomes ``replacement`` when given (a name people
    read: ``bad\ufffd.txt``), else the text ``\\xff`` as ``ls -b`` writes it (a key: nothing is lost)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_escaped(ch, replacement) for ch in text)
    return text


# Characters that show nothing and change what a name reads as: zero-width space and joiners, the word joiner,
# a byte-order mark, and the bidirectional controls a name can be spoofed with ("invoice\u202efdp.exe").
# A joiner between two non-ASCII characters (an emoji sequence, Persian or Indic script) is part of the word.
_INVISIBLE = re.compile(
    r"[\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
    r"|(?<![^\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f])"
)


def readable_name(name: str) -> str:
    """A file name people read, from the one the file system gave: bytes it could not decode as UTF-8 read as
    Windows-1252 (a name written by a legacy system: ``caf\\xe9.txt`` is ``café.txt``, not ``caf\ufffd.txt``,
    whose U+FFFD then stood in the title too), and invisible format characters dropped (issue 47.10)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        escaped_bytes_only = all(not "\ud800" <= ch < "\udc80" for ch in name)  # os.fsdecode's surrogates
        raw = name.encode("utf-8", "surrogateescape") if escaped_bytes_only else encodable(name, "\ufffd").encode()
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            try:
                name = raw.decode("cp1252")
            except UnicodeDecodeError:
                name = raw.decode("latin-1")
    return _INVISIBLE.sub("", name)


def _escaped(ch: str, replacement: str | None) -> str:
    if not "\ud800" <= ch <= "\udfff":
        return ch
    if replacement is not None:
        return replacement
    if ch >= "\udc80":  # os.fsdecode's surrogateescape range: the byte it stands for
        return f"\\x{ord(ch) - 0xDC00:02x}"
    return f"\\u{ord(ch):04x}"


def words(text: str) -> list[str]:
    return WORD_RE.findall(text)


def sentences(text: str) -> list[str]:
    """Split prose into sentences; line breaks inside a paragraph are joined first."""
    flat = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]


# neither alphanumeric nor white space, as str.isalnum and str.isspace say (re's \w and \s are those two, and
# \w adds "_"): counted by the regex engine, not a Python loop per character (issue 47.11)
_PUNCT = re.compile(r"[^\w\s]|_")


def estimate_tokens(text: str) -> int:
    """Word-piece tokens, estimated: ~1.3 per word plus punctuation, never below the word count.

    Chunking must stay pure and fast, so it estimates rather than running the model's tokenizer;
    the chunk size leaves headroom under the model's 256-token window.
    """
    n_words = len(WORD_RE.findall(text))
    n_punct = len(_PUNCT.findall(text))
    return int(n_words * 1.3 + n_punct * 0.5) + 1


def query_terms(query: str) -> list[str]:
    """Lower-cased query words without stopwords (falls back to all words if only stopwords)."""
    ws = [w.lower() for w in words(query)]
    return content_terms(query) or list(dict.fromkeys(ws))


def content_terms(query: str) -> list[str]:
    """Lower-cased query words without stopwords and single characters; none for a query of only those."""
    return list(dict.fromkeys(w for w in (x.lower() for x in words(query)) if w not in STOPWORDS and len(w) > 1))


_HYPHEN_BREAK = re.compile(r"(\w)-\n(?=[a-z])")


def normalise_ocr(text: str) -> str:
    """OCR output as prose: words hyphenated across line ends rejoined, whitespace unified."""
    return normalise(_HYPHEN_BREAK.sub(r"\1", text))


def title_from_filename(filename: str) -> str:
    """``MPL-1.1.txt`` → ``MPL 1.1`` (a dot between digits is a version, not a separator); a name with no
    extension keeps its version whole (``Apache-2.0`` → ``Apache 2.0``: ``.0`` is no extension)."""
    path = PurePosixPath(filename)
    stem = path.stem if path.suffix[1:] and not path.suffix[1:].isdigit() else path.name
    stem = re.sub(r"[_\-]+|(?<!\d)\.|\.(?!\d)", " ", stem)
    stem = re.sub(r"\s+", " ", stem).strip()
    return (stem[:1].upper() + stem[1:]) if stem else filename


_VERSION = re.compile(r"v?\d+(?:[.\-_+~]\w+)+")  # 2.1.3, v10.4-1, 1.0~rc2


def could_be_title(line: str) -> bool:
    """Whether a document's first line or heading may be its title (issue 51.3): not a script's interpreter
    line (``#!/bin/sh``), a version string (``2.1.3``), or a path (``/usr/share/doc/x``, ``~/.bashrc``); those
    are what a file holds, not what it is called, and the next heading or the file's name says more."""
    text = line.strip()
    if not text or text.startswith("#!"):
        return False
    if _VERSION.fullmatch(text):
        return False
    return not (" " not in text and ("/" in text or text.startswith("~")))
