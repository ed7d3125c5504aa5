"""Word's automatic numbering, rendered as a reader sees it: ``2.17``, ``(b)``, ``iv.`` (bullets are left out:
they carry nothing to search for).

A numbered paragraph holds no number: ``w:numPr`` (on the paragraph, or on its style) names a numbering
instance and a level, and ``numbering.xml`` says each level's format (``decimal``, ``lowerLetter``,
``upperRoman``, a bullet, …), its text (``%1.%2``) and where it starts. The counters run in document
order: a level counts up, the levels below it start again. Without this, clause numbers ("2.17") were
not in the text and not searchable.
"""

from __future__ import annotations

from typing import Any

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _val(el: Any, tag: str) -> str | None:
    child = el.find(f"{_W}{tag}") if el is not None else None
    return None if child is None else child.get(f"{_W}val")


def _roman(n: int) -> str:
    out = ""
    for value, digits in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                          (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):  # fmt: skip
        while n >= value:
            out, n = out + digits, n - value
    return out


def _letters(n: int) -> str:
    """Word's letters: a … z, then aa … zz (the letter repeated), and so on."""
    if n <= 0:
        return str(n)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def _formatted(n: int, fmt: str) -> str:
    match fmt:
        case "lowerLetter":
            return _letters(n)
        case "upperLetter":
            return _letters(n).upper()
        case "lowerRoman":
            return _roman(n)
        case "upperRoman":
            return _roman(n).upper()
        case "decimalZero":
            return f"{n:02d}"
        case "none":
            return ""
        case _:  # decimal and the formats this reader does not spell out (ordinal, cardinalText, …)
            return str(n)


def _levels_of(abstract: Any) -> dict[int, tuple[str, str, int]]:
    """An abstract numbering's levels: each one's format, its text ("%1.%2") and its start."""
    levels = {}
    for lvl in abstract.iter(f"{_W}lvl"):
        start = _val(lvl, "start")
        levels[int(lvl.get(f"{_W}ilvl") or 0)] = (
            _val(lvl, "numFmt") or "decimal",
            _val(lvl, "lvlText") or "",
            int(start or 1),
        )
    return levels


def _overrides_of(num: Any) -> dict[int, int]:
    """A numbering instance's restarts: level → its start override."""
    overrides = {}
    for override in num.iter(f"{_W}lvlOverride"):
        start = _val(override, "startOverride")
        if start is not None:
            overrides[int(override.get(f"{_W}ilvl") or 0)] = int(start)
    return overrides


class Numbering:
    """The numbering of one document: ``label(paragraph)`` gives each numbered paragraph its number, in
    the order the paragraphs are read."""

    def __init__(self, document: Any) -> None:
        self._levels: dict[str, dict[int, tuple[str, str, int]]] = {}  # abstractNumId → level → format
        self._nums: dict[str, tuple[str, dict[int, int]]] = {}  # numId → (abstractNumId, start overrides)
        self._counters: dict[str, dict[int, int]] = {}
        self._style_num: dict[str, tuple[str, int]] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return  # no numbering part: nothing is numbered
        self._levels = {a.get(f"{_W}abstractNumId") or "": _levels_of(a) for a in root.iter(f"{_W}abstractNum")}
        self._nums = {
            num.get(f"{_W}numId") or "": (_val(num, "abstractNumId") or "", _overrides_of(num))
            for num in root.iter(f"{_W}num")
        }
        for style in document.styles.element.iter(f"{_W}style"):
            num_pr = style.find(f"{_W}pPr/{_W}numPr")
            if num_pr is not None and _val(num_pr, "numId"):
                num_id, ilvl = _val(num_pr, "numId") or "", int(_val(num_pr, "ilvl") or 0)
                self._style_num[style.get(f"{_W}styleId") or ""] = (num_id, ilvl)

    def label(self, paragraph: Any) -> str:
        """The number Word shows before ``paragraph`` (``""`` when it is not numbered)."""
        if not self._nums:
            return ""
        p_pr = paragraph._p.pPr
        num_pr = p_pr.find(f"{_W}numPr") if p_pr is not None else None
        if num_pr is not None and _val(num_pr, "numId") is not None:
            num_id, ilvl = _val(num_pr, "numId") or "", int(_val(num_pr, "ilvl") or 0)
        else:
            style_id = _val(p_pr, "pStyle") if p_pr is not None else None
            num_id, ilvl = self._style_num.get(style_id or "", ("", 0))
        if num_id in ("", "0") or num_id not in self._nums:
            return ""
        abstract, overrides = self._nums[num_id]
        levels = self._levels.get(abstract, {})
        if ilvl not in levels or levels[ilvl][0] == "bullet":
            return ""
        # instances of one list continue its numbering, unless an instance restarts it (startOverride)
        counters = self._counters.setdefault(num_id if overrides else f"abstract:{abstract}", {})
        start = overrides.get(ilvl, levels[ilvl][2])
        counters[ilvl] = counters.get(ilvl, start - 1) + 1
        for deeper in [k for k in counters if k > ilvl]:
            del counters[deeper]  # a level counting up starts the levels below it again
        text = levels[ilvl][1]
        for k in range(ilvl + 1):
            level_fmt, _, level_start = levels.get(k, ("decimal", "", 1))
            value = counters.get(k, overrides.get(k, level_start))
            text = text.replace(f"%{k + 1}", _formatted(value, level_fmt))
        return text.strip()
