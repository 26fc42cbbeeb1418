"""One student, one name: nicknames a class can tell apart on the board (Unicode's UTS #39).

With "Ana" in a room, "Аna" (a Cyrillic А), "Ana" with an invisible mark after it, "Ana" in
mathematical bold and "lan" beside "Ian" all look like a name already there. Two things keep a
board honest, both as Unicode's Technical Standard #39 defines them, on Unicode's own data
(unicode/, with its licence and where each file came from):

- **refused**: what a name can't hold and still be read — characters that show nothing
  (Default_Ignorable_Code_Point: U+034F, variation selectors, zero-width spaces; the zero-width
  joiners only where a script needs them), code points Unicode hasn't assigned or leaves to
  private use, the same mark twice in a row or more than four stacked (§5.4), letters of two
  scripts in one name (§5.2's "Highly Restrictive": one script, or Latin with Han and kana,
  Bopomofo or Hangul, as Japanese, Chinese and Korean names are written), digits of two
  numbering systems (§5.3);
- **folded**: two names whose confusable skeletons are the same (§4, confusables.txt), as typed
  or whatever their letters' case, are one name: `name_keys` are what a room keeps unique.

Real names in any script join as typed: "Zoë", "Łukasz", "Дмитрий", "李雷", "Nguyễn", "Anna"
beside "Ana". Refusals are sentences of the app's own, naming the character by its code point,
never quoting the name.
"""

from __future__ import annotations

import bisect
import gzip
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("unicode")
MAX_MARKS = 4  # nonspacing marks stacked on one character, at most (UTS #39 §5.4)
JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner: invisible, and needed by some scripts
BLANKS = set(
    "\u115f\u1160\u3164\uffa0\u2800"
)  # Hangul fillers, the blank braille cell: letters that show nothing
# Latin and the scripts its names are written beside (UTS #39 §5.2, "Highly Restrictive")
WRITTEN_TOGETHER = (
    frozenset({"Latn", "Hani", "Hira", "Kana"}),  # Japanese
    frozenset({"Latn", "Hani", "Bopo"}),  # Chinese with Bopomofo
    frozenset({"Latn", "Hani", "Hang"}),  # Korean
)
ANY = None  # the script set of a Common or Inherited character: it goes with every script


def refusal(name: str) -> str | None:
    """Why `name` (cleaned: spaces collapsed, NFC) can't be a nickname, in a sentence; or None."""
    for i, ch in enumerate(name):
        category = unicodedata.category(ch)
        if category in ("Cn", "Cs"):
            return f"Your nickname has a character ({_point(ch)}) this server's Unicode doesn't know."
        if category == "Co":
            return (
                f"Your nickname has a private-use character ({_point(ch)}): fonts draw it each their own way."
            )
        if ch in BLANKS or (_ignorable(ch) and not _joiner_needed(name, i)):
            return f"Your nickname has a character that shows nothing ({_point(ch)}): use visible letters."
    if problem := _stacked_marks(name):
        return problem
    if len({ord(ch) - unicodedata.digit(ch) for ch in name if unicodedata.category(ch) == "Nd"}) > 1:
        return "Your nickname mixes digits of different numbering systems: write them in one."
    if scripts := mixed_scripts(name):
        shown = " and ".join(script_name(s) for s in scripts[:3])
        return f"Your nickname mixes letters of different scripts ({shown}): write it in one."
    return None


def name_keys(name: str) -> tuple[str, str]:
    """What makes two nicknames one: (its skeleton whatever its case and width, its skeleton as
    typed). Two names are one if any key of one is a key of the other: "Ana", "ANA", "ａｎａ" and
    "𝐀𝐧𝐚" share the first; "Ian" and "lan" share the second (a capital I looks like an l, a
    lower-case i doesn't); "˛an" looks like "ian", whose case-free key is "Ian"'s."""
    return skeleton(unicodedata.normalize("NFKC", name).casefold()), skeleton(name)


def same_name(one: str, other: str) -> bool:
    """Whether a room takes these two as one nickname."""
    return bool(set(name_keys(one)) & set(name_keys(other)))


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, drop what shows nothing, each character to its prototype, NFD again."""
    prototypes = _confusables()
    decomposed = unicodedata.normalize("NFD", text)
    mapped = "".join(prototypes.get(ch, ch) for ch in decomposed if not _ignorable(ch))
    return unicodedata.normalize("NFD", mapped)


def mixed_scripts(name: str) -> list[str]:
    """The scripts of `name`'s letters if they are more than one name can be written in
    (UTS #39 §5.1-5.2, Highly Restrictive); [] if they are fine."""
    sets = [s for ch in name if (s := scripts_of(ch)) is not ANY]
    if not sets or frozenset.intersection(*sets) or any(all(s & w for s in sets) for w in WRITTEN_TOGETHER):
        return []
    found: dict[str, None] = {}  # each letter's own script, in the name's order, for the sentence
    for ch in name:
        if scripts_of(ch) is not ANY:
            found.update(dict.fromkeys(sorted(_scripts().get(ch) or {"Zzzz"})))
    return list(found)


def scripts_of(ch: str) -> frozenset[str] | None:
    """A character's Script_Extensions as ISO 15924 codes; ANY (None) for Common and Inherited.
    (A character ScriptExtensions.txt doesn't list has its Script alone; one Scripts.txt doesn't
    list, Unknown.)"""
    found = _extensions().get(ch) or _scripts().get(ch) or frozenset({"Zzzz"})
    return ANY if found & {"Zyyy", "Zinh"} else found


def script_name(code: str) -> str:
    """ "Latin" for "Latn" (Unicode's own name, underscores as spaces)."""
    return _script_names().get(code, code).replace("_", " ")


def data_versions() -> dict[str, str]:
    """Each vendored Unicode file's version, from its header."""
    versions = {}
    for path in sorted(DATA.glob("*.txt.gz")):
        head = "".join(
            line for _, line in zip(range(12), _lines(path.name.removesuffix(".gz")), strict=False)
        )
        found = re.search(r"Version: (\d+\.\d+\.\d+)|-(\d+\.\d+\.\d+)\.txt", head)
        versions[path.name.removesuffix(".gz")] = next(g for g in found.groups() if g) if found else "?"
    return versions


# --- the rules ----------------------------------------------------------------------------------


def _stacked_marks(name: str) -> str | None:
    """UTS #39 §5.4: the same nonspacing mark twice in a row, or more than MAX_MARKS stacked."""
    run: list[str] = []
    for ch in unicodedata.normalize("NFD", name) + " ":
        if unicodedata.category(ch) in ("Mn", "Me"):
            if run and run[-1] == ch:
                return f"Your nickname has the same accent twice on one letter ({_point(ch)})."
            run.append(ch)
            continue
        if len(run) > MAX_MARKS:
            return f"Your nickname stacks {len(run)} accents on one letter; at most {MAX_MARKS}, please."
        run = []
    return None


def _joiner_needed(name: str, i: int) -> bool:
    """A zero-width joiner or non-joiner where a script needs one (after a virama, as Indic
    scripts spell conjuncts; a non-joiner between two joining letters, as Persian writes), as
    IDNA's CONTEXTJ rules allow them (RFC 5892, A.1-A.2, without the joining-type tables)."""
    if name[i] not in JOINERS:
        return False
    before, after = name[i - 1 : i], name[i + 1 : i + 2]
    if before and unicodedata.combining(before) == 9:  # a virama
        return True
    return name[i] == "\u200c" and bool(before and after) and _joining(before) and _joining(after)


def _joining(ch: str) -> bool:
    return unicodedata.category(ch) == "Lo" and bool(
        (scripts_of(ch) or frozenset())
        & {"Arab", "Syrc", "Nkoo", "Mong", "Phag", "Mand", "Mani", "Adlm", "Rohg"}
    )


def _ignorable(ch: str) -> bool:
    return _ignorables().get(ch) is not None


def _point(ch: str) -> str:
    return f"U+{ord(ch):04X}"


# --- Unicode's data, read once --------------------------------------------------------------------


def _lines(name: str) -> Iterator[str]:
    with gzip.open(DATA / f"{name}.gz", "rt", encoding="utf-8-sig") as f:
        yield from f


def _records(name: str) -> Iterator[tuple[int, int, list[str]]]:
    """(first, last, fields) for each `XXXX..YYYY ; field ; ... # comment` line of a data file."""
    for line in _lines(name):
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        points, *fields = (part.strip() for part in data.split(";"))
        first, _, last = points.partition("..")
        yield int(first, 16), int(last or first, 16), fields


@cache
def _confusables() -> dict[str, str]:
    """confusables.txt: each source character's prototype (one or more characters)."""
    return {
        chr(first): "".join(chr(int(p, 16)) for p in fields[0].split())
        for first, _, fields in _records("confusables.txt")
    }


class _Ranges:
    """Values of code point ranges: `get(ch)` is the value of the range holding `ch`, or None."""

    def __init__(self, ranges: Iterator[tuple[int, int, object]]) -> None:
        self.starts, self.ends, self.values = [], [], []
        for first, last, value in sorted(ranges, key=lambda r: r[0]):
            self.starts.append(first)
            self.ends.append(last)
            self.values.append(value)

    def get(self, ch: str):
        i = bisect.bisect_right(self.starts, ord(ch)) - 1
        return self.values[i] if i >= 0 and ord(ch) <= self.ends[i] else None


@cache
def _ignorables() -> _Ranges:
    """DerivedCoreProperties.txt's Default_Ignorable_Code_Point."""
    records = _records("DerivedCoreProperties.txt")
    return _Ranges(
        (first, last, True) for first, last, fields in records if fields[0] == "Default_Ignorable_Code_Point"
    )


@cache
def _script_names() -> dict[str, str]:
    """ISO 15924 code -> Unicode's long name (PropertyValueAliases.txt, `sc`)."""
    names = {}
    for line in _lines("PropertyValueAliases.txt"):
        parts = [p.strip() for p in line.split("#", 1)[0].split(";")]
        if len(parts) >= 3 and parts[0] == "sc":
            names[parts[1]] = parts[2]
    return names


@cache
def _scripts() -> _Ranges:
    """Scripts.txt: each range's Script, as its ISO 15924 code."""
    code = {long: short for short, long in _script_names().items()}
    return _Ranges((first, last, frozenset({code[f[0]]})) for first, last, f in _records("Scripts.txt"))


@cache
def _extensions() -> _Ranges:
    """ScriptExtensions.txt: the characters used by more than their own script."""
    return _Ranges(
        (first, last, frozenset(f[0].split())) for first, last, f in _records("ScriptExtensions.txt")
    )
