"""The UI's formatting pieces, on their own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from alphadesk import ui
from alphadesk.ui.format import (
    eval_table,
    inert,
    mark_label,
    money,
    orders_table,
    report_parts,
)


def test_money_puts_the_sign_before_the_dollar() -> None:
    assert [money(-159.856), money(1234.5), money(0.0), money(None)] == [
        "-$159.86", "$1,234.50", "$0.00", "–"
    ]  # fmt: skip


def test_a_mark_basis_is_a_short_label_and_the_rest_goes_to_a_note() -> None:
    unpriced = {"mark": None, "mark_basis": "no price: KO 2021-07-16 7.5P: not listed"}
    assert mark_label(unpriced) == ("no price at this date", "KO 2021-07-16 7.5P: not listed")
    priced = {"mark": 54.1, "mark_basis": "bundled close 2021-06-30"}
    assert mark_label(priced) == ("bundled close 2021-06-30", None)
    long = {"mark": 1.2, "mark_basis": "expired: intrinsic at bundled close 2021-07-16"}
    label, note = mark_label(long)
    assert len(label) <= 32 and label.endswith("…") and note == long["mark_basis"]


def test_orders_read_by_trade_date_newest_first() -> None:
    put = {"symbol": "KO", "right": "put", "strike": 50.0, "expiration": "2021-07-16"}
    orders = [
        {"id": 1, "side": "buy", "quantity": 10.0, "price": 20.0, "source": "manual",
         "as_of": "2021-06-30T20:00:00Z", "contract": {"symbol": "NVDA"}},
        {"id": 2, "side": "sell", "quantity": 2.0, "price": 0.85, "source": "run x",
         "as_of": "2021-07-01T20:00:00Z", "contract": put},
    ]  # fmt: skip
    table = orders_table(orders)
    assert table.to_dict("records") == [
        {"trade date": "2021-07-01", "side": "sell", "quantity": "2",
         "contract": "KO 2021-07-16 50P", "price": "$0.85", "source": "run x", "order": 2},
        {"trade date": "2021-06-30", "side": "buy", "quantity": "10", "contract": "NVDA",
         "price": "$20.00", "source": "manual", "order": 1},
    ]  # fmt: skip


def test_a_report_is_split_where_it_shows_an_image() -> None:
    report = "# NVDA\n\n## Chart\n\n![NVDA daily chart](/srv/data/runs/x/chart.png)\n\n## Why\n"
    assert report_parts(report) == ["# NVDA\n\n## Chart\n\n", "\n\n## Why\n"]
    assert report_parts("# CSP\n") == ["# CSP\n"]


def test_an_evaluation_reads_as_its_markdown_file_with_a_dash_for_what_is_missing() -> None:
    from alphadesk.pipelines.evaluation.files import COLUMNS, cells

    desk = {"strategy": "desk", "symbol": "AAPL", "cumulative_return": 0.4005,
            "annualized_return": -0.0123, "sharpe": 1.016832, "max_drawdown": -0.262108,
            "win_rate": None, "trades": 1, "turnover": 1.584985, "costs": 1325.49,
            "model_calls": 112, "model_cost_usd": 0.0, "decisions": 7, "buy": 5, "hold": 1,
            "sell": 1, "failed": 0}  # fmt: skip
    baseline = desk | {"strategy": "buy_hold", "buy": None, "hold": None, "sell": None,
                       "failed": None, "model_calls": 0}  # fmt: skip
    table = eval_table([desk, baseline])
    assert list(table.columns) == list(COLUMNS)
    for shown, row in zip(table.to_dict("records"), (desk, baseline), strict=True):
        assert list(shown.values()) == ["–" if c == "-" else c for c in cells(row)]
    assert table.iloc[0]["cum. return"] == "40.05%" and table.iloc[1]["decisions"] == "–"


@pytest.mark.parametrize(
    "text",
    [
        "![chart](http://127.0.0.1:9/leak.png?from=question)",
        "see ![x]( http://127.0.0.1:9/a.png 'title') and ![y](<http://127.0.0.1:9/b c.png>)",
        "![by reference][img]\n\n[img]: http://127.0.0.1:9/ref.png",
        "[![a badge](http://127.0.0.1:9/badge.svg)](http://127.0.0.1:9/page)",
        "\\![escaped first](http://127.0.0.1:9/escaped.png)",
    ],
)
def test_inert_text_has_no_image_markdown_would_load(text: str) -> None:
    import markdown_it

    html = markdown_it.MarkdownIt("commonmark").render(inert(text))
    assert "<img" not in html, html
    assert "http://127.0.0.1:9/" in html  # still there, as text or a link to click


def test_inert_leaves_text_without_images_as_it_was() -> None:
    text = "**NVDA**: BUY at $138.85! [the filing](https://sec.gov/x) - `a[0]` and ! [spaced]"
    assert inert(text) == text


def test_every_markdown_the_ui_draws_from_a_value_goes_through_inert() -> None:
    """Text drawn as Markdown (bodies, alerts, captions, labels) that is not a literal is
    ``inert(...)``: a question, an answer or a report cannot make a browser load a URL."""
    drawing = {"markdown", "write", "error", "info", "success", "warning", "caption", "status"}
    unsafe = []
    for path in sorted(Path(ui.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name = node.func.attr
            texts = [*node.args[:1]] if name in drawing else []
            texts += [k.value for k in node.keywords if k.arg == "label"]
            for text in texts:
                literal = isinstance(text, ast.Constant) and isinstance(text.value, str)
                wrapped = isinstance(text, ast.Call) and getattr(text.func, "id", "") == "inert"
                if not (literal or wrapped):
                    unsafe.append(f"{path.name}:{node.lineno} {name}")
    assert not unsafe, unsafe
