"""The one door: every surface's answer admitted or refused in one place (consent.admit)."""

from __future__ import annotations

import pytest

from xtyserver.memory import commands as c
from xtyserver.memory.manage import Confirmations, ForgetPreview, ForgetSpec
from xtyserver.memory.types import Scope
from xtyserver.session.asking import AskTexts, expected_words
from xtyserver.session.consent import UNASKED_DELAY, UNASKED_PER_HOUR, admit

T0 = 1_790_000_000.0
ITEM = ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a", item_id=7)
ALL = ForgetSpec(kind="all")


def _issued(spec: ForgetSpec, asker: str = "") -> tuple[Confirmations, str]:
    tokens = Confirmations("s")
    preview = ForgetPreview(spec=spec, saves=(), profile_fields=(), stats_saves=())
    return tokens, tokens.issue(preview, T0, turn=1, asker=asker)


def test_a_forget_without_an_answer_is_its_preview() -> None:
    tokens = Confirmations("s")
    assert admit(c.Forget(target=ALL), None, tokens, T0) == c.Preview(target=ALL)


# (answer, admitted for everything): only an answer that answers nothing else confirms it.
BROAD = [
    (lambda t: c.Words(token=t, text="好，清除吧", asked="q", expected=_words()), False),
    (lambda t: c.Words(token=t, text="确认删除", asked="q", expected=_words()), False),
    (lambda t: c.Words(token=t, text="确认删除全部记忆", asked="q", expected=_words()), True),
    (lambda t: c.Words(token=t, text="确认删除全部记忆"), False),  # the question lapsed
    (lambda t: c.Dialog(token=t, yes=True), True),
    (lambda t: c.Menu(token=t), True),
    (lambda t: c.Page(token=t, session=""), True),
    (lambda t: c.Elicited(token=t, accepted=True), True),
    (lambda t: c.Terminal(token=t), True),
    (lambda t: c.Unasked(token=t, quote="all"), False),
]


def _words() -> tuple[str, ...]:
    return expected_words("all", AskTexts())


@pytest.mark.parametrize(("answer", "admitted"), BROAD)
def test_everything_goes_only_on_an_answer_that_answers_nothing_else(
    answer: object, admitted: bool
) -> None:
    tokens, token = _issued(ALL)
    made = answer(token)  # type: ignore[operator]
    result = admit(c.Forget(target=ALL), made, tokens, T0 + 60, turn=2)
    assert (result == c.Forget(target=ALL)) is admitted, result


def test_a_dialog_no_voids_the_token_an_elicited_no_refuses_this_call_only() -> None:
    tokens, token = _issued(ITEM)
    forget = c.Forget(target=ITEM)
    assert admit(forget, c.Elicited(token=token, accepted=False), tokens, T0) == "declined"
    assert admit(forget, c.Elicited(token=token, accepted=True), tokens, T0) == forget
    tokens, token = _issued(ITEM)
    assert admit(forget, c.Dialog(token=token, yes=False), tokens, T0) == "declined"
    assert admit(forget, c.Dialog(token=token, yes=True), tokens, T0) == "unknown"


def test_a_token_is_its_askers_for_its_target_and_single_use() -> None:
    tokens, token = _issued(ITEM, asker="page-a")
    forget = c.Forget(target=ITEM)
    assert admit(forget, c.Page(token=token, session="b"), tokens, T0, asker="b") == "unknown"
    other = c.Forget(target=ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a"))
    page = c.Page(token=token, session="page-a")
    assert admit(other, page, tokens, T0, asker="page-a") == "other_target"
    assert admit(forget, page, tokens, T0 + 121, asker="page-a") == "expired"
    tokens, token = _issued(ITEM, asker="page-a")
    page = c.Page(token=token, session="page-a")
    assert admit(forget, page, tokens, T0 + 120, asker="page-a") == forget
    assert admit(forget, page, tokens, T0 + 120, asker="page-a") == "unknown"


def test_an_unasked_echo_deletes_one_item_after_its_delay_with_its_quote_at_a_bounded_rate() -> (
    None
):
    forget = c.Forget(target=ITEM)
    quote = c.quote(ITEM)
    tokens, token = _issued(ITEM)
    early = T0 + UNASKED_DELAY - 0.001
    assert admit(forget, c.Unasked(token=token, quote=quote), tokens, early) == "too_soon"
    at = T0 + UNASKED_DELAY
    assert admit(forget, c.Unasked(token=token, quote="item"), tokens, at) == "unquoted"
    off = admit(forget, c.Unasked(token=token, quote=quote), tokens, at, trash_on=False)
    assert off == "needs_person"
    # Three in the last hour already (any surface's trash entries): the fourth waits.
    full = [at - 3599.0] * UNASKED_PER_HOUR
    assert admit(forget, c.Unasked(token=token, quote=quote), tokens, at, recent=full) == (
        "too_many"
    )
    older = [at - 3600.0] * UNASKED_PER_HOUR + [at - 10.0] * (UNASKED_PER_HOUR - 1)
    assert admit(forget, c.Unasked(token=token, quote=quote.upper()), tokens, at, recent=older) == (
        forget
    )


def test_a_restore_in_chat_needs_words_that_ask_for_it() -> None:
    tokens = Confirmations("s")
    restore = c.Restore(game_id="stardew-valley")
    assert admit(restore, c.Words(text="好"), tokens, T0) == "not_asked"
    assert admit(restore, c.Words(text="刚才删错了，恢复一下"), tokens, T0) == restore
    assert admit(restore, None, tokens, T0) == restore  # the page's or the CLI's own click


def test_reading_and_correcting_are_the_persons_own_acts() -> None:
    tokens = Confirmations("s")
    for command in (c.View(), c.Pin(scope=Scope("g", "s"), event_id=1), c.Export()):
        assert admit(command, None, tokens, T0) == command
