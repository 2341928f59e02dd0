"""What the hostile-input tests share: the odd texts and markup, and the page-health check.

test_hostile_input.py (text typed or linked, shown literally) and test_hostile_urls.py (URL
values, resource bounds, downloads) feed the app these strings and check each page with
`assert_healthy`.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.apptest import texts

SMALL = {"embed_dim": "8", "num_heads": "2"}  # the model size does not matter for input tests
MARKDOWN_KINDS = ("markdown", "caption", "info", "warning", "error", "success")
# Characters that would start HTML, a link, emphasis, LaTeX, a directive or code in markdown.
ACTIVE = "<>[]()*_$`:!&#|~=\\"

ZWJ_FAMILY = "👩\u200d👩\u200d👧\u200d👦"
ZALGO = "Z\u0335\u0322\u031b\u0319a\u0338\u0347l\u0336\u0359g\u0337\u0353o\u0334\u0346"
TEXTS = {
    "empty": "",
    "whitespace": " \t\n\u3000\u00a0\r\n ",
    "long_100k": ("中和有一個永和路。The cat sat on the mat! " * 4000)[:100_000],
    "repeat_5000": "字" * 5000,
    "one_word_5000": "a" * 5000,
    "emoji_zwj": f"{ZWJ_FAMILY} family 👨🏽\u200d💻 codes 🇹🇼 flag ❤️",
    "combining": "cafe\u0301 e\u0301 " + ZALGO,
    "combining_flood": "e" + "\u0301" * 5000,  # one cluster of 5 001 code points
    "zwj_flood": "a" + "\u200d" * 3000 + "b",
    "rtl": "مرحبا بالعالم שלום עולם",
    "control": "a\x00b \x1b[31mred\x1b[0m \u202eevil\u202c \x07\x08\x7f \ufeffend",
    "only_controls": "\x00\x01\x02\x1b\x7f",
    "mixed_scripts": "The cat 坐在墊子上 Привет 안녕하세요 ١٢٣ Ελληνικά 🙂",
    "punctuation": "!!! ??? ... ，。！？「」 --- |",
    "line_breaks": "line1\nline2\r\nline3\u2028line4\u2029line5",
    "pipes_only": "|||| || |",
}
MARKUP = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "javascript:alert(1)",
    "[x](javascript:alert(1))",
    "![pic](https://evil.example/x.png)",
    "<a href='https://evil.example'>click</a>",
    "**bold** _it_ ~~gone~~",
    "$$\\latex$$",
    ":red[x] :material/home:",
    "`code` # heading > quote",
    "&lt;b&gt;entity&lt;/b&gt;",
    "\\<script\\>",
    "{{7*7}} ${7*7}",
]


def markdown_values(at) -> list[str]:
    return [str(e.value) for kind in MARKDOWN_KINDS for e in at.get(kind)]


def unescaped(text: str, chars: str) -> list[str]:
    """The characters of `chars` in `text` that no backslash escapes (`\\x` is inert)."""
    found, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2  # an escaped character, whatever it is
            continue
        if text[i] in chars:
            found.append(text[i])
        i += 1
    return found


def assert_healthy(at) -> None:
    """No exception element, no error box, no traceback, no raw `<` in any markdown."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert "Traceback" not in texts(at)
    for value in markdown_values(at):
        assert not unescaped(value, "<"), value


def infos(at) -> list[str]:
    return [i.value for i in at.info]


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


PWNED = Path("/tmp/attention-studio-pwned")  # what a pickle that ran would leave behind


class RunsOnUnpickle:
    """A pickle that would call os.system on load (touching PWNED): a file must never run it."""

    def __reduce__(self):
        import os

        return (os.system, (f"touch {PWNED}",))
