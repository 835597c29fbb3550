"""The Cost page's three empty states (issue 38): the offline model (free, said so), a model with no known
price (how to give it one), nothing at all in the period; never an empty chart. And a priced spend draws
its charts. Rendered from the page's own template with the ledger's own rows."""

from __future__ import annotations

from board.spending.ledger import CostRow
from bot.web.render import bar_chart, render_page


def _row(key: str, calls: int, cost: float, unpriced: int = 0) -> CostRow:
    return CostRow(key=key, calls=calls, failed=0, input_tokens=10, output_tokens=5, cache_read_tokens=0,
                   cache_write_tokens=0, cost_usd=cost, unpriced=unpriced, avg_latency_ms=None)


def _page(total: CostRow, *, offline: bool, charts: bool = False) -> str:
    chart = bar_chart([("general", total.cost_usd)], title="Cost per role") if charts else None
    return render_page("cost.html", nav=(), csrf="", signed_in=True, prefix="/ui", active="cost", title="Cost",
                       days=14, total=total, by_role=[total] if total.calls else [], offline=offline,
                       day_chart=chart, role_chart=chart)


def test_offline_model_says_it_is_free() -> None:
    page = _page(_row("", 3, 0.0), offline=True)
    assert "No spend yet: the offline model is free." in page and "llm.prices" in page
    assert "<svg" not in page and "in 3 model calls" in page and "$0<" in page


def test_an_unpriced_model_says_how_to_price_it() -> None:
    page = _page(_row("", 1, 0.0, unpriced=1), offline=False)
    assert "1 call used a model with no known price" in page and "in 1 model call " in page
    assert "<svg" not in page


def test_nothing_at_all_in_the_period() -> None:
    page = _page(_row("", 0, 0.0), offline=False)
    assert "No spend in the last 14 days." in page and "<svg" not in page and "<table" not in page


def test_a_priced_spend_draws_its_charts() -> None:
    page = _page(_row("", 2, 0.25), offline=False, charts=True)
    assert page.count("<svg") == 2 and "No spend" not in page
