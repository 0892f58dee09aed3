"""The UI's formatting pieces, on their own."""

from __future__ import annotations

from alphadesk.ui.format import mark_label, money, orders_table, report_parts


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
