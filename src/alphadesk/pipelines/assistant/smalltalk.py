"""Small talk, recognised without a model: "hello", "thanks!", "good morning".

A greeting needs no classifier, no router and no tool; on a small local model those two
agents alone took minutes. The check is deliberately narrow: a short message made only
of small-talk words, with at least one greeting or thanks, and nothing that could be a
symbol, a number or a question about markets. Anything else takes the full path.
"""

from __future__ import annotations

import re

from alphadesk.agents.assistant import Classification, RouterDecision

__all__ = ["SMALL_TALK_CLASSIFICATION", "SMALL_TALK_DECISION", "is_small_talk"]

_MAX_CHARS = 60
_MAX_WORDS = 8


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_OPENERS = _words(
    "hi hello hey hiya howdy yo greetings morning afternoon evening thanks thank thx ty "
    "cheers bye goodbye hallo bonjour hola ciao"
)
_FILLER = _words(
    "good there you all everyone team friend folks how are is it going doing whats what's "
    "up again so much very a lot for the your help nice great cool ok okay awesome today "
    "and to meet see later have day night i am im i'm fine well just wanted say"
)
_WORD = re.compile(r"[a-z']+")
_PLAIN = re.compile(r"[A-Za-z' !?.,-]+")  # no digits, $, ^ or other signs of a symbol

SMALL_TALK_CLASSIFICATION = Classification(question_type="greeting")
SMALL_TALK_DECISION = RouterDecision(
    complexity="SIMPLE", strategy="DIRECT", reason="small talk: answered without tools"
)


def is_small_talk(question: str) -> bool:
    """Whether ``question`` is a greeting or thanks and nothing more."""
    text = question.strip()
    if len(text) > _MAX_CHARS or not _PLAIN.fullmatch(text):
        return False
    words = _WORD.findall(text.lower())
    if not words or len(words) > _MAX_WORDS:
        return False
    return any(w in _OPENERS for w in words) and all(w in _OPENERS | _FILLER for w in words)
