"""A bare-figure answer gets the words its evidence writes after the figure ("500,000 [E1]" ->
"500,000 rows [E1]"): the answer text of the generation stage, kept apart from its backends."""

from __future__ import annotations

import re

from stages.common.text import MARKER_RE, STOPWORDS

# A whole answer that is a figure and its markers: "500,000 [E1]", "Two [E2].", "99.9 % [E1]"
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
BARE_FIGURE_ANSWER_RE = re.compile(
    rf"^\s*((?:[€$£]\s?)?\d+(?:[.,:]\d+)*(?:\s?%)?|{'|'.join(NUMBER_WORDS)})"
    r"\s*\.?\s*((?:\[E\d+\]\s*)+)\.?\s*$",
    re.IGNORECASE,
)
FIGURE_WORDS = 3  # words taken after the figure at most: "two 90-minute onboarding sessions"
# words that end the phrase, stopwords among them: "25 % below 99.0 %" is not a unit
PHRASE_ENDS = STOPWORDS | frozenset(
    re.findall(
        r"\w+",
        "above below under over after before within without per from into across between among "
        "during until since through via than versus against about around near beyond up down "
        "each every all any both some more less most least only also",
    )
)


def words_after(figure: str, text: str) -> list[str]:
    """The words the text writes right after each occurrence of the figure, up to a stopword
    or a punctuation mark ("up to 500,000 rows per file" -> ["rows"])."""
    pattern = rf"(?<![\w.,]){re.escape(figure)}(?![\w%]|[.,]\d)"
    found = []
    for match in re.finditer(pattern, text, re.IGNORECASE):
        taken = []
        for token in text[match.end() :].split()[:FIGURE_WORDS]:
            word = token.rstrip(".,;:!?)")
            if not re.fullmatch(r"[^\W_][\w-]*", word) or word.lower() in PHRASE_ENDS:
                break
            taken.append(word)
            if word != token:  # a punctuation mark ends the phrase
                break
        found.append(" ".join(taken))
    return found


def with_figure_words(answer: str, evidence: dict[str, str]) -> str:
    """A bare-figure answer with the words its cited evidence writes after the figure:
    "500,000 [E1]" -> "500,000 rows [E1]". A figure alone does not say what it counts (the
    LLM answered "500,000" and "Two" where the evidence says "500,000 rows" and "two 90-minute
    sessions"). Unchanged unless every occurrence in the cited evidence has the same
    words after it."""
    match = BARE_FIGURE_ANSWER_RE.match(answer)
    if not match:
        return answer
    figure, markers = match.group(1), match.group(2).strip()
    cited = [evidence.get(i, "") for i in MARKER_RE.findall(markers)]
    tails = {tail for text in cited for tail in words_after(figure, text)}
    if len(tails) != 1 or not (tail := tails.pop()):
        return answer
    return f"{figure} {tail} {markers}"
