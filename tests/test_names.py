"""mlp/rooms/names.py: nicknames a class can tell apart (Unicode's UTS #39, on Unicode's own data).

Two corpora: lookalikes of names already in a room, made from Unicode's own data (every
confusable of each letter, every character that shows nothing, stacked marks, other scripts'
letters), all of which must be refused; and real names in many scripts, all of which must join
as typed and stay apart. The counts are printed: the issue's note quotes them.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import unicodedata

import pytest

from mlp.rooms import Rooms, Store, Visitor
from mlp.rooms.names import DATA, data_versions, mixed_scripts, name_keys, refusal, same_name, skeleton
from mlp.rooms.rooms import RoomError, clean_nickname

# Where each vendored file came from, and its SHA-256 (of the text, before gzip). confusables.txt is
# Unicode 15.1.0's, as the unicode-org ICU repository carried it (ICU 74.2); the others are Unicode
# 15.0.0's, from Debian's unicode-data package (15.0.0-1).
SOURCES = {
    "confusables.txt": "8289f833e4cf78fde56b2080dc0e42934ef5182c9c3f4dd1fbdf2bced69fd5ed",
    "Scripts.txt": "cca85d830f46aece2e7c1459ef1249993dca8f2e46d51e869255be140d7ea4b0",
    "ScriptExtensions.txt": "7e07313d9d0bee42220c476b64485995130ae30917bbcf7780b602d677d7e33f",
    "DerivedCoreProperties.txt": "d367290bc0867e6b484c68370530bdd1a08b6b32404601b8c7accaf83e05628d",
    "PropertyValueAliases.txt": "13a7666843abea5c6b7eb8c057c57ab9bb2ba96cfc936e204224dd67d71cafad",
}

IN_THE_ROOM = ["Ana", "Ben", "Maria", "Olga", "Paul", "Ian", "Emma", "Oscar", "Chloe", "Kim", "Yusuf", "Leo"]

# Real names, as a class types them: none is refused, and no two are one.
REAL_NAMES = [
    *["Zoë", "Łukasz", "Дмитрий", "李雷", "Anna", "Nguyễn Văn An", "José María", "O'Brien", "Mary-Jane"],
    *["Jean-Luc 2", "Björk", "Jürgen", "Çağrı", "İlkay", "Ștefan", "Žaneta", "Řehoř", "Þórunn", "Dániel"],
    *["Ñoño", "Māui", "Kaʻiulani", "Ṣọlá", "Adébáyọ̀", "Lê Thị Hồng", "François", "Ågot", "Søren", "Ýr"],
    *["Σωκράτης", "Ἀλέξανδρος", "Ελένη", "Наталья", "Олександр", "Ђорђе", "Љиљана", "Гүлнар", "Ірина"],
    *["山田太郎", "やまだ", "たなかハナ", "田中ハナコ", "ヤマダ", "张伟", "王芳", "陈静", "李明ㄌㄧˇ"],
    *["김민준", "이서연", "박지후", "金민준", "محمد", "فاطمة", "نیک‌نام", "علی رضا", "דוד", "שרה"],
    *["राम", "ज्ञान", "श्रीनिवास", "அருண்", "ক্ষমা", "ਗੁਰਪ੍ਰੀਤ", "સ્નેહા", "ଓଡ଼ିଆ", "ಕಿರಣ್", "മഞ്ജു"],
    *["สมชาย", "ນາງ", "ဇော်", "ខេមរា", "ნინო", "Արամ", "ሰላም", "ᏣᎳᎩ", "ᐃᓄᒃ", "བསྟན་འཛིན"],
    *["Emma2", "Leo 🙂", "Ana Lopez", "Anna Lopez", "Ana López", "Li", "Lí", "Yuki", "Jose", "Lukas"],
    *["田中Taro", "Kim 민준", "Chen 陈", "Paula", "Pablo", "Olga K.", "Ben-David", "Iannis", "Ianna"],
]


def test_the_vendored_data_is_unicodes_own_files_with_their_licence():
    assert data_versions() == {
        "DerivedCoreProperties.txt": "15.0.0",
        "PropertyValueAliases.txt": "15.0.0",
        "ScriptExtensions.txt": "15.0.0",
        "Scripts.txt": "15.0.0",
        "confusables.txt": "15.1.0",
    }
    for name, sha in SOURCES.items():
        text = gzip.decompress((DATA / f"{name}.gz").read_bytes())
        assert hashlib.sha256(text).hexdigest() == sha, name
    assert "UNICODE LICENSE V3" in (DATA / "LICENSE").read_text()


def test_skeletons_fold_what_unicode_says_looks_alike():
    # UTS #39's own examples and the issue's
    assert skeleton("𝔭𝒶ỿ𝕡𝕒ℓ") == skeleton("paypal")
    for lookalike in ("Аna", "Anа", "ANA", "ana", "ａｎａ", "𝐀𝐧𝐚", "𝓐𝓷𝓪", "Ꭺna"):
        assert same_name(lookalike, "Ana"), lookalike
    for one, other in (
        ("Ian", "lan"),
        ("Ian", "ian"),
        ("Ian", "1an"),
        ("˛an", "Ian"),
        ("B0B", "BOB"),
        ("Kim", "Kirn"),
    ):
        assert same_name(one, other), (one, other)  # I, l and 1; case; 0 and O; m and rn
    for one, other in (
        ("Anna", "Ana"),
        ("Zoë", "Zoe"),
        ("José", "Jose"),
        ("Lí", "Li"),
        ("ian", "lan"),
        ("ELI", "Ell"),
    ):
        assert not same_name(one, other), (one, other)


@pytest.mark.parametrize(
    "name, words",
    [
        ("Ana\u034f", "shows nothing (U+034F)"),  # combining grapheme joiner
        ("Ana\ufe0f", "shows nothing (U+FE0F)"),  # a variation selector
        ("Ana\u200b", "shows nothing (U+200B)"),  # zero-width space
        ("A\u200dna", "shows nothing (U+200D)"),  # a joiner where no script needs one
        ("Ana\u202e", "shows nothing (U+202E)"),  # right-to-left override
        ("Ana\u3164", "shows nothing (U+3164)"),  # Hangul filler
        ("Ana\u2800", "shows nothing (U+2800)"),  # the blank braille cell
        ("Ana\U000e0041", "shows nothing (U+E0041)"),  # a tag character
        ("Aná\u0301", "same accent twice"),
        ("Ana" + "\u0300\u0301\u0302\u0303\u0304", "stacks 5 accents"),
        ("Аna", "(Cyrillic and Latin)"),
        ("Anа", "(Latin and Cyrillic)"),
        ("Αna", "(Greek and Latin)"),
        ("Ana\ue000", "private-use character (U+E000)"),
        ("Ana\U0001fae8", "doesn't know"),  # unassigned in this Python's Unicode
        ("Ana 1٢", "digits of different numbering systems"),
    ],
)
def test_tricks_are_refused_with_a_sentence_that_names_the_character_not_the_name(name, words):
    problem = refusal(unicodedata.normalize("NFC", name))
    assert problem is not None and words in problem
    assert "Ana" not in problem
    with pytest.raises(RoomError, match="Your nickname"):
        clean_nickname(name)


def test_joiners_are_kept_where_a_script_needs_them():
    assert refusal("نیک\u200cنام") is None  # Persian: a non-joiner between joining letters
    assert refusal("क्\u200dष") is None  # Devanagari: a joiner after a virama
    assert same_name("نیک\u200cنام", "نیکنام")  # and they fold away
    assert mixed_scripts("田中Taro") == [] and mixed_scripts("Kim 민준") == []  # Latin beside CJK
    assert mixed_scripts("Ana Дмитрий") == ["Latn", "Cyrl"]


def lookalikes() -> dict[str, list[str]]:
    """For each name in the room, what a hostile student would type to pose as it, by kind."""
    prototypes = {}
    from mlp.rooms.names import _confusables  # the table itself: every confusable of each letter

    for source, target in _confusables().items():
        prototypes.setdefault(target, []).append(source)
    made: dict[str, list[str]] = {"confusable letter": [], "invisible": [], "stacked": [], "style": []}
    invisible = [
        "\u034f",
        "\u200b",
        "\u200c",
        "\u200d",
        "\u2060",
        "\u2061",
        "\u2063",
        "\ufeff",
        "\u180e",
        "\u115f",
        "\u3164",
        "\u202a",
        "\u2066",
        *(chr(c) for c in range(0xFE00, 0xFE10)),
        *(chr(c) for c in range(0xE0100, 0xE0104)),
    ]
    for name in IN_THE_ROOM:
        for i, letter in enumerate(name):  # each letter swapped for each of its confusables
            for other in prototypes.get(letter, []) + prototypes.get(letter.lower(), []):
                made["confusable letter"].append(name[:i] + other + name[i + 1 :])
        for i, mark in itertools.product(range(1, len(name) + 1), invisible):
            made["invisible"].append(name[:i] + mark + name[i:])
        last = len(name)
        made["stacked"] += [
            name + "\u0301\u0301",
            name + "\u0308" * 3,
            name + "\u0300\u0301\u0302\u0303\u0304\u0306",
        ]
        made["stacked"] += [name[:1] + "\u0335\u0335" + name[1:]]
        styles = [0x1D400, 0x1D434, 0x1D468, 0x1D4D0, 0x1D56C, 0x1D5A0, 0x1D5D4, 0x1D670]  # math alphabets
        for base in styles:
            made["style"].append("".join(_styled(ch, base) for ch in name[:last]))
        made["style"] += [name.upper(), name.lower(), unicodedata.normalize("NFKC", name).swapcase()]
        made["style"].append(
            "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in name)
        )  # full width
    return made


def _styled(ch: str, base: int) -> str:
    if "A" <= ch <= "Z":
        return chr(base + ord(ch) - ord("A"))
    if "a" <= ch <= "z":
        return chr(base + 26 + ord(ch) - ord("a"))
    return ch


def test_every_lookalike_of_a_name_in_the_room_is_refused_and_every_real_name_joins(tmp_path):
    rooms = Rooms(Store(f"sqlite:///{tmp_path}/rooms.sqlite3"), later=lambda *_: None)
    room, _ = rooms.create("class", members=500)
    taken = {
        key
        for i, name in enumerate(IN_THE_ROOM)
        for key in name_keys(rooms.join(room.code, name, Visitor(f"10.0.0.{i}", f"b{i:020}")).nickname)
    }
    refused, joined = {}, []
    for kind, names in lookalikes().items():
        refused[kind] = [0, len(names)]
        for name in names:
            cleaned = unicodedata.normalize("NFC", name)
            if refusal(cleaned) is not None or set(name_keys(cleaned)) & taken:
                refused[kind][0] += 1
            else:
                joined.append(name)
    print("\nlookalikes refused, by kind:", {k: f"{a} of {b}" for k, (a, b) in refused.items()})
    assert not joined, [ascii(n) for n in joined[:20]]
    assert sum(b for _, b in refused.values()) > 2_000
    problems = {name: refusal(unicodedata.normalize("NFC", name)) for name in REAL_NAMES}
    assert not {n: p for n, p in problems.items() if p}, "real names refused"
    folded = [(a, b) for a, b in itertools.combinations(REAL_NAMES, 2) if same_name(a, b)]
    assert not folded, "real names folded together"
    for i, name in enumerate(REAL_NAMES):  # and they join as typed, beside the names in the room
        member = rooms.join(room.code, name, Visitor(f"10.1.{i // 200}.{i % 200}", f"c{i:020}"))
        assert member.nickname == unicodedata.normalize("NFC", name)
    print(f"different names kept: {len(REAL_NAMES)} of {len(REAL_NAMES)}")
