"""The words a run lends a restatement of its results besides their keys and values: the tools'
names, the calls' arguments (their tokens, and their numbers, dates, networks and phone numbers
keyed as a claim may write them) and the run's today ("yesterday" names a day by it)."""

from __future__ import annotations

import re
from typing import Any

import agents.checking.residue as residue
import agents.checking.run_clock as run_clock
from agents.checking.formats import AgentRun
from stages.common import values
from stages.common.text import stem

TODAY_KEY = "@today:"


def context_words(run: AgentRun) -> set[str]:
    """Words a restatement may use besides the results' keys and values: the tools' names and
    the calls' argument values (what the result is about)."""
    words: set[str] = set()
    for call in run.calls:
        words |= set(values.key_words(call.name))
        words |= {stem(w) for w in values.key_words(call.name)}
        if not call.args_error:
            words |= argument_words(call.args)
    for result in run.results:
        words |= set(values.key_words(result.name))
    clock = run_clock.clock_of(run.user_texts)
    if clock is not None:  # the day "yesterday" or "hoy" names
        words.add(TODAY_KEY + clock.today.isoformat())
    return words


def argument_words(args: Any) -> set[str]:
    """The words a call's arguments lend a restatement: their tokens, their numbers and dates
    as the claim may write them, and the directions they filter on."""
    words: set[str] = set()
    # an IP address is lent whole (below), never by its octets: "3 reports" is no part of 45.1.2.3
    plain = [v for v in scalars(args) if values.network_of(v) is None]
    for token, _, _ in values.tokens_with_spans(flat(plain)):
        words |= {token, stem(token)}
    for value in scalars(args):  # a number, a date or a time argument, as a claim may say it
        number = values.number_of(value) if isinstance(value, int | float | str) else None
        if number is not None and not isinstance(value, bool):
            words.add(number_key(number))  # "$325.50" for {"amount": "325.50"}
        network = values.network_of(value)
        if network is not None:  # "203.45.86.0/24", as a claim may write it
            words.add(f"%{network}")
        if isinstance(value, str) and re.fullmatch(r"\+?[\d\s().-]{6,}", value):
            words.add(re.sub(r"\D", "", value))  # a phone number, in groups
        moment = values.moment_of(value)
        if moment is not None:
            words |= {
                moment_key(moment),
                moment_key(values.Moment(moment.date, None, None, 0, 0)),
                moment_key(values.Moment(None, moment.time, None, 0, 0)),
            }
    # "above that amount" over `> 100`; "the last 90 days" over `{"maxAgeInDays": 90}`
    return words | residue.filter_words(args) | residue.window_words(args)


def number_key(number: float) -> str:
    """A number as `context_words` holds an argument's ("#325.5")."""
    return f"#{number:.6g}"


def moment_key(moment: values.Moment) -> str:
    """A date or time as `context_words` holds an argument's ("@2027-03-09T19:30")."""
    return f"@{moment.date or ''}T{moment.time or ''}"


def scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in scalars(v)]
    if isinstance(value, list):
        return [x for v in value for x in scalars(v)]
    return [value]


def flat(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(flat(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(flat(v) for v in value)
    return "" if value is None else str(value)
